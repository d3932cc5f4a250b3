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
// decodes to the value the input decodes to. The corpus under testdata/fuzz/FuzzAppend adds
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
		sum, ferr := canon.Fingerprint(in)
		if err != nil {
			if !errors.Is(err, canon.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			if string(out) != "prefix:" {
				t.Fatalf("failed Append changed dst to %q", out)
			}
			if !errors.Is(ferr, canon.ErrInvalid) {
				t.Fatalf("Fingerprint accepts what Append rejects (%v)", err)
			}
			if json.Valid(in) && !rejectable(err) {
				t.Fatalf("valid JSON rejected: %v", err)
			}
			return
		}
		if ferr != nil {
			t.Fatalf("Fingerprint rejects what Append accepts: %v", ferr)
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
		if sum != sha256.Sum256(c) {
			t.Fatalf("Fingerprint is not the SHA-256 of the canonical form")
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

func rejectable(err error) bool {
	for _, r := range rejectsValidJSON {
		if strings.Contains(err.Error(), r) {
			return true
		}
	}
	return false
}
