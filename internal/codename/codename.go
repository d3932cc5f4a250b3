// Package codename compares failure codes as both sides of remedy spell them in different
// ways: IDEMPOTENCY_KEY_REUSED, idempotency-key-reused and IdempotencyKeyReused are one code.
package codename

import "unsafe"

// Norm writes code lowercased with every non-alphanumeric removed into buf, the form
// codes are compared in. ok is false for an empty code or one longer than buf.
func Norm(buf *[64]byte, code string) (string, bool) {
	if code == "" || len(code) > len(buf) {
		return "", false
	}
	n := 0
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			buf[n] = c
			n++
		case c >= 'A' && c <= 'Z':
			buf[n] = c + 'a' - 'A'
			n++
		}
	}
	return unsafe.String(&buf[0], n), true
}
