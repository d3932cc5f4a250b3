package server

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeBody checks the fast decoder against encoding/json: what it reads, it reads as
// encoding/json does, and what it does not is left to encoding/json, which then says why.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}],"c":"d\u00e9\ud83d\ude00","e":-1.5e3,"f":true}`, `[]`, `{}`, ` [ 0 , 0 ] `,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `"\ud800"`, `[1,]`, `{"a" 1}`, `1 2`, "\"\xff\"", `[` + strings.Repeat("0,", 40) + `0]`,
		`{"x":["a","a","a"],"y":[["1e0"]]}`, `"\/\b\f\n\r\t\""`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeFast(data)
		slow, err := decodeSlow(data)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("the fast decoder read what encoding/json refuses (%v): %q", err, data)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("decoded apart:\n%#v\n%#v", fast, slow)
		}
	})
}
