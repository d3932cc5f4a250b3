package canon_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/remedy-go/remedy/internal/canon"
)

// rejectsValidJSON lists the reasons Append may reject text that encoding/json accepts: JSON
// that is not I-JSON or that has no canonical form. A rejection of valid JSON for any other
// reason is a bug.
var rejectsValidJSON = []string{
	"duplicate member name",
	"nesting deeper than",
	"lone surrogate",
	"out of the range of a double",
	"invalid UTF-8", // encoding/json accepts it and substitutes U+FFFD when decoding
}

// FuzzAppend checks, for any input, that Append does not panic, rejects with ErrInvalid, and,
// when it accepts, writes valid JSON that is its own canonical form and that encoding/json
// decodes to the value the input decodes to; and that AppendExact and Fingerprint accept what
// Append accepts, and a number beyond a double besides. The corpus under testdata/fuzz/FuzzAppend adds
// the RFC 8785 examples and the edge cases found so far.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{
		`{"b":2,"a":1}`,
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001]}`,
		`{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`,
		`[0,-0,1e21,1e20,1e-7,0.000001,9007199254740993,5e-324,1.7976931348623157e308]`,
		`"\u0000\u001f\b\f\n\r\t\/\"\\\u00e9\uffff"`,
		` { "a" : [ true , false , null ] } `,
		`{"a":1,"\u0061":2}`,
		`"\ud800"`,
		"\"\xff\"",
		`1e400`,
		`01`,
		strings.Repeat("[", 129) + strings.Repeat("]", 129),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// A prefix without spare capacity checks that Append appends, and that a failure
		// leaves it alone.
		prefix := []byte("prefix:")
		out, err := canon.Append(prefix[:len(prefix):len(prefix)], in)
		exact, xerr := canon.AppendExact(prefix[:len(prefix):len(prefix)], in)
		sum, ferr := canon.Fingerprint(in)
		if (xerr == nil) != (ferr == nil) {
			t.Fatalf("Fingerprint and AppendExact disagree: %v, %v", ferr, xerr)
		}
		if xerr != nil {
			if !errors.Is(xerr, canon.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", xerr)
			}
			if string(exact) != "prefix:" {
				t.Fatalf("failed AppendExact changed dst to %q", exact)
			}
			if err == nil {
				t.Fatalf("AppendExact rejects what Append accepts: %v", xerr)
			}
		} else {
			checkExact(t, in, prefix, exact, sum)
		}
		if err != nil {
			if !errors.Is(err, canon.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			if string(out) != "prefix:" {
				t.Fatalf("failed Append changed dst to %q", out)
			}
			if json.Valid(in) && !rejectable(err) {
				t.Fatalf("valid JSON rejected: %v", err)
			}
			// Append stops at its first error, so AppendExact may find another after a number
			// beyond a double; but it accepts only what Append refuses for such a number.
			if xerr == nil && !strings.Contains(err.Error(), "out of the range of a double") {
				t.Fatalf("AppendExact accepts what Append refuses: %q (%v)", in, err)
			}
			return
		}
		if !bytes.HasPrefix(out, prefix) {
			t.Fatalf("dst not kept: %q", out)
		}
		c := out[len(prefix):]
		if !json.Valid(in) {
			t.Fatalf("invalid JSON accepted: %q -> %q", in, c)
		}
		if !json.Valid(c) {
			t.Fatalf("output is not valid JSON: %q -> %q", in, c)
		}
		again, err := canon.Append(nil, c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, c, again, err)
		}
		var vin, vout any
		if err := json.Unmarshal(in, &vin); err != nil {
			t.Fatalf("encoding/json cannot decode the input: %v", err)
		}
		if err := json.Unmarshal(c, &vout); err != nil {
			t.Fatalf("encoding/json cannot decode the output: %v", err)
		}
		// Floats compare with ==, so -0 equals the 0 it is written as.
		if !reflect.DeepEqual(vin, vout) {
			t.Fatalf("value changed: %q -> %q\n%#v\n%#v", in, c, vin, vout)
		}
	})
}

// checkExact checks an accepted input's exact form, out (after prefix), and its fingerprint:
// valid JSON, its own exact form, and hashed by Fingerprint. That it holds the input's values
// is FuzzFingerprint's part.
func checkExact(t *testing.T, in, prefix, out []byte, sum [32]byte) {
	t.Helper()
	if !bytes.HasPrefix(out, prefix) {
		t.Fatalf("dst not kept: %q", out)
	}
	x := out[len(prefix):]
	if !json.Valid(in) {
		t.Fatalf("invalid JSON accepted: %q -> %q", in, x)
	}
	if !json.Valid(x) {
		t.Fatalf("exact form is not valid JSON: %q -> %q", in, x)
	}
	again, err := canon.AppendExact(nil, x)
	if err != nil || !bytes.Equal(again, x) {
		t.Fatalf("exact form not idempotent: %q -> %q -> %q (%v)", in, x, again, err)
	}
	if sum != sha256.Sum256(x) {
		t.Fatalf("Fingerprint is not the SHA-256 of the exact form")
	}
}

func rejectable(err error) bool {
	for _, r := range rejectsValidJSON {
		if strings.Contains(err.Error(), r) {
			return true
		}
	}
	return false
}
