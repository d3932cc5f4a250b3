package server

import (
	"crypto/rand"
	"encoding/hex"
)

// traceID is the trace id of a W3C traceparent header (version-traceid-parentid-flags), or a
// new random one when the header is absent or malformed.
func traceID(traceparent string) string {
	if len(traceparent) >= 55 && traceparent[2] == '-' && traceparent[35] == '-' && traceparent[52] == '-' {
		id := traceparent[3:35]
		if isLowerHex(traceparent[:2]) && traceparent[:2] != "ff" && isLowerHex(id) && id != "00000000000000000000000000000000" &&
			isLowerHex(traceparent[36:52]) && isLowerHex(traceparent[53:55]) {
			return id
		}
	}
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
