package oadoc

import "strings"

// How an operation takes an Idempotency-Key: not at all (as far as the document says),
// when sent, or only with one.
const (
	KeyNone     = ""
	KeyOptional = "optional"
	KeyRequired = "required"
)

// KeyHeaderName is the header an operation declares to say that it honours idempotency keys.
const KeyHeaderName = "Idempotency-Key"

// KeyHeader reports whether a parameter is the Idempotency-Key header (names and locations
// in any case). X-Idempotency-Key is another header: not the one clients send.
func KeyHeader(in, name string) bool {
	return strings.EqualFold(in, "header") && strings.EqualFold(name, KeyHeaderName)
}

// KeyExtension reads an operation's x-idempotency-key, decoded from JSON: "optional", true
// or "true" (a key is honoured when sent), "required" (one must be sent), false or "false"
// (none is). ok is false for any other value, which declares nothing.
func KeyExtension(v any) (mode string, ok bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return KeyOptional, true
		}
		return KeyNone, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "optional", "true":
			return KeyOptional, true
		case "required":
			return KeyRequired, true
		case "false":
			return KeyNone, true
		}
	}
	return KeyNone, false
}

// KeyMode is how an operation takes an Idempotency-Key, from either signal a document may
// give: its x-idempotency-key extension (ext, decoded; nil when absent) or an Idempotency-Key
// header parameter (header: one is declared; required: it is marked required). When both
// are given, the one that asks more wins: a required header makes the key required.
func KeyMode(ext any, header, required bool) string {
	mode, _ := KeyExtension(ext)
	switch {
	case header && required:
		return KeyRequired
	case header && mode == KeyNone:
		return KeyOptional
	}
	return mode
}
