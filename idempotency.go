package remedy

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
)

// keyring mints the idempotency keys of one call: one per distinct payload (by its canonical
// form), so that unchanged retries carry the same key — the server replays instead of running
// twice — and a rewritten payload gets its own.
type keyring struct {
	caller string // the caller's key, used as is for the caller's payload
	keys   map[[32]byte]string
}

func (k *keyring) key(args json.RawMessage) (string, error) {
	if k.caller != "" {
		return k.caller, nil
	}
	fp := fingerprint(args)
	if key, ok := k.keys[fp]; ok {
		return key, nil
	}
	key := newKey()
	if k.keys == nil {
		k.keys = make(map[[32]byte]string, 2)
	}
	k.keys[fp] = key
	return key, nil
}

// newKey is 128 random bits, as 26 characters of base32 (what the Idempotency-Key draft and
// common servers accept: printable ASCII well under 255 bytes).
func newKey() string { return rand.Text() }

// fingerprint identifies a payload by its canonical form: key order and whitespace do not
// matter, any changed value does.
func fingerprint(args json.RawMessage) [32]byte {
	return sha256.Sum256(compact(string(args)))
}

// sameJSON reports whether two payloads are the same document.
func sameJSON(a, b json.RawMessage) bool { return fingerprint(a) == fingerprint(b) }
