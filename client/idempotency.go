package client

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"unsafe"

	"github.com/remedy-go/remedy/internal/canon"
)

// KeySupport is what is known of a server's support for the Idempotency-Key header (or the
// idempotencyKey argument over MCP) on one operation. A key only makes a retry safe when the
// server honours it: replays the stored result instead of running the request again.
type KeySupport uint8

const (
	// KeysUnknown: a key is sent, but not counted on. After a request was written and its
	// answer lost, a non-idempotent call stops with ErrOutcomeUnknown instead of sending
	// the request again. An Idempotency-Replayed answer during the call shows the server
	// honours keys, and makes later retries of the call safe.
	KeysUnknown KeySupport = iota
	// KeysHonoured: the server replays a repeated key, so a retry after a lost answer is
	// safe. LoadOpenAPI sets it for an operation that declares an Idempotency-Key header
	// parameter or x-idempotency-key.
	KeysHonoured
	// KeysOff: no key is sent.
	KeysOff
)

var keySupportNames = [...]string{"unknown", "honoured", "off"}

// String is the support's name: "unknown", "honoured" or "off".
func (k KeySupport) String() string {
	if int(k) < len(keySupportNames) {
		return keySupportNames[k]
	}
	return "keys(" + strconv.Itoa(int(k)) + ")"
}

// keyring mints the idempotency keys of one call, one per distinct payload: unchanged
// retries carry the same key — the server replays instead of running twice — and a rewritten
// payload gets its own. Payloads are told apart by their canonical form (key order and
// whitespace do not matter), computed only once a rewrite makes a second payload, so that the
// common call pays for one random key and nothing else.
type keyring struct {
	caller  string // the caller's key, used as is for the caller's payload
	args    json.RawMessage
	current string
	seen    map[[32]byte]string // every payload's key, once there is more than one
	spare   *keySpace           // where the first key minted is written, if not used already
}

// key is the key for args.
func (k *keyring) key(args json.RawMessage) string {
	if k.current != "" && bytes.Equal(args, k.args) {
		return k.current
	}
	if k.current == "" {
		k.args = args
		k.current = k.caller
		if k.current == "" {
			k.current = k.spare.mint()
		}
		return k.current
	}
	// A second payload: the caller's key was for the caller's payload.
	if k.seen == nil {
		k.seen = map[[32]byte]string{fingerprint(k.args): k.current}
	}
	fp := fingerprint(args)
	key, ok := k.seen[fp]
	if !ok {
		key = k.derive(fp)
		k.seen[fp] = key
	}
	k.args, k.current = args, key
	return key
}

// replaced notes that the caller's payload args was replaced before it was sent (repaired
// against the operation's schema): the caller's key stays with it, and the payload sent gets
// a key of its own, as a payload rewritten after a failure does.
func (k *keyring) replaced(args json.RawMessage) {
	if k.caller != "" && k.current == "" {
		k.args, k.current = args, k.caller
	}
}

// derive is the key of a payload other than the caller's, whose fingerprint is fp: with a
// caller's key, one derived from it and the payload, so that the caller running the same call
// again with the same key sends the same repaired payload under the same key, and the server
// replays it rather than executing it twice; without one, a fresh key.
func (k *keyring) derive(fp [32]byte) string {
	if k.caller == "" {
		return newKey()
	}
	h := sha256.New()
	h.Write([]byte("remedy repaired payload\x00"))
	h.Write([]byte(k.caller))
	h.Write([]byte{0})
	h.Write(fp[:])
	return "r-" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)[:16])
}

// newKey is 128 random bits as 26 base32 characters: printable ASCII well under the 255
// bytes servers accept.
func newKey() string {
	var b [26]byte
	randomKey(&b)
	return string(b[:])
}

// keySpace holds the characters of one minted key, in memory that lives as long as the call
// that sends it (its run), so that the common call's key costs no allocation of its own.
type keySpace struct {
	b    [26]byte
	used bool
}

// mint is newKey, written into s the first time. Once written the characters never change,
// so the string may view them in place.
func (s *keySpace) mint() string {
	if s == nil || s.used {
		return newKey()
	}
	s.used = true
	randomKey(&s.b)
	return unsafe.String(&s.b[0], len(s.b))
}

// randomKey writes a key into b: the 26 characters of crypto/rand.Text, each of 26 random
// bytes taken modulo 32 (130 bits in all). The bytes come from a ChaCha8 generator seeded
// from crypto/rand — cryptographically strong, as math/rand/v2 documents it — one per
// goroutine at a time (sync.Pool): reading the system's generator for each key cost more
// than all the rest of minting it.
func randomKey(b *[26]byte) {
	g := generators.Get().(*mrand.ChaCha8)
	g.Read(b[:])
	generators.Put(g)
	for i, c := range b {
		b[i] = keyAlphabet[c%32]
	}
}

var generators = sync.Pool{New: func() any {
	var seed [32]byte
	rand.Read(seed[:])
	return mrand.NewChaCha8(seed)
}}

const keyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// fingerprint identifies a payload by its exact canonical form (canon.Fingerprint: RFC 8785
// with every number by its exact decimal value); bytes that are not JSON are identified as
// they are.
func fingerprint(args json.RawMessage) [32]byte {
	if fp, err := canon.Fingerprint(args); err == nil {
		return fp
	}
	return sha256.Sum256(args)
}

// sameJSON reports whether two payloads are the same document.
func sameJSON(a, b json.RawMessage) bool { return fingerprint(a) == fingerprint(b) }
