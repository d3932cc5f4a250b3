package canon_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/remedy-go/remedy/internal/canon"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canonical is the canonical form of in, failing the test if in is rejected.
func canonical(t *testing.T, in string) string {
	t.Helper()
	out, err := canon.Append(nil, []byte(in))
	require.NoError(t, err, "input %q", in)
	return string(out)
}

// The examples of RFC 8785 itself: section 3.2.2 (whitespace, literals, numbers, strings) and
// section 3.2.3 (sorting by UTF-16 code units).
func TestRFC8785Examples(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "3.2.2 serialization",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],` +
				`"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			name: "3.2.3 sorting",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control",` +
				`"ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign",` +
				`"😀":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, canonical(t, tt.in))
		})
	}
}

// The number samples of RFC 8785 Appendix B, given as IEEE 754 bit patterns. Each double is
// fed in several spellings, which must all come out as the one ECMAScript would write.
func TestNumbersAppendixB(t *testing.T) {
	tests := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"}, // minus zero
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, tt := range tests {
		f := math.Float64frombits(tt.bits)
		spellings := []string{
			strconv.FormatFloat(f, 'g', -1, 64),
			strconv.FormatFloat(f, 'e', -1, 64),
			strconv.FormatFloat(f, 'E', 17, 64), // 17 digits: not the shortest, same double
			strconv.FormatFloat(f, 'f', -1, 64), // up to 300+ digits for the extremes
		}
		for _, in := range spellings {
			t.Run(fmt.Sprintf("%016x/%.40s", tt.bits, in), func(t *testing.T) {
				assert.Equal(t, tt.want, canonical(t, in))
			})
		}
	}
}

// Literal spellings, including the ones the brief of the fingerprint cares about: equal values
// spelled differently, and the boundaries of ECMAScript's choice of exponent form.
func TestNumbers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"-0.0", "0"},
		{"0e10", "0"},
		{"-0E-5", "0"},
		{"1", "1"},
		{"-1", "-1"},
		{"1.0", "1"},
		{"1.50", "1.5"},
		{"4.50", "4.5"},
		{"2e-3", "0.002"},
		{"1E30", "1e+30"},
		{"1e+30", "1e+30"},
		{"100E-2", "1"},
		{"0.000001", "0.000001"}, // n = -5: still plain
		{"0.0000001", "1e-7"},    // n = -6: exponent form
		{"1e-7", "1e-7"},         // written as ECMAScript does, without a leading zero
		{"1.5e-7", "1.5e-7"},     // fraction and negative exponent
		{"0.00000015", "1.5e-7"}, // the same double spelled plainly
		{"123e-9", "1.23e-7"},    // and spelled as an integer mantissa
		{"0.0000012345", "0.0000012345"},
		{"1e20", "100000000000000000000"},
		{"100000000000000000000", "100000000000000000000"}, // 21 digits: plain
		{"1e21", "1e+21"},
		{"1000000000000000000000", "1e+21"}, // 22 digits: exponent form
		{"1.5e21", "1.5e+21"},
		{"123456789012345678901234", "1.2345678901234569e+23"},
		{"999999999999999", "999999999999999"},   // 15 digits, the integer fast path
		{"-999999999999999", "-999999999999999"}, // and negative
		{"1000000000000000", "1000000000000000"}, // 16 digits, through the double
		{"9007199254740993", "9007199254740992"}, // 2^53+1 is not a double: rounds to even
		{"9007199254740992.5", "9007199254740992"},
		{"18446744073709551615", "18446744073709552000"}, // max uint64
		{"333333333.33333329", "333333333.3333333"},
		{"0.1", "0.1"},
		{"0.10000000000000001", "0.1"}, // the same double
		{"5e-324", "5e-324"},
		{"1e-400", "0"}, // underflow rounds to zero, as JSON.parse does; only overflow fails
		{"-1e-400", "0"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"1.7976931348623158e308", "1.7976931348623157e+308"}, // rounds down to the largest double
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, canonical(t, tt.in))
			assert.Equal(t, "["+tt.want+"]", canonical(t, "[ "+tt.in+" ]"), "inside an array")
		})
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", `"abc"`, `"abc"`},
		{"empty", `""`, `""`},
		{"short escapes stay", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{"long forms of short escapes", `"\u0008\u000C\u000a\u000D\u0009"`, `"\b\f\n\r\t"`},
		{"other controls as lowercase \\u00xx", `"\u0000\u0001\u001F\u000B"`, `"\u0000\u0001\u001f\u000b"`},
		{"quote and backslash", `"\u0022\u005C\"\\"`, `"\"\\\"\\"`},
		{"solidus unescaped", `"\/a/b"`, `"/a/b"`},
		{"DEL is not a control of RFC 8785", `"\u007f"`, "\"\x7f\""},
		{"non-ASCII unescaped", `"\u00e9\u00E9é"`, `"ééé"`},
		{"line separators unescaped", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"HTML characters unescaped", `"<>&\u003c"`, `"<>&<"`},
		{"surrogate pair joined", `"\ud83d\ude00\uD83D\uDE00😀"`, `"😀😀😀"`},
		{"last code point", `"\udbff\udfff"`, "\"\U0010FFFF\""},
		{"noncharacter kept", `"\uffff\ufdd0"`, "\"\uffff\ufdd0\""},
		{"raw UTF-8 kept", `"日本語 ✓ 𝄞"`, `"日本語 ✓ 𝄞"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, canonical(t, tt.in))
		})
	}
}

// Member names are sorted by UTF-16 code units, which differs from byte (and code point) order
// in two places: characters above U+FFFF sort before U+E000..U+FFFF, and escapes sort by the
// character they stand for, not by the backslash.
func TestSortOrder(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{
			"surrogates sort below U+E000",
			"{\"\uffff\":5,\"\ue000\":4,\"\U0001F600\":3,\"z\":2,\"\":1}",
			"{\"\":1,\"z\":2,\"\U0001F600\":3,\"\ue000\":4,\"\uffff\":5}",
		},
		{
			"two supplementary characters in code point order",
			"{\"\U0010FFFF\":2,\"\U00010000\":1}",
			"{\"\U00010000\":1,\"\U0010FFFF\":2}",
		},
		{
			"escapes sort by their character",
			`{"a":6,"]":5,"\\":4,"\"":3," ":2,"\n":1,"\u001f":0}`,
			`{"\n":1,"\u001f":0," ":2,"\"":3,"\\":4,"]":5,"a":6}`,
		},
		{"prefix first", `{"ab":2,"a":1,"abc":3}`, `{"a":1,"ab":2,"abc":3}`},
		{"case sensitive", `{"b":1,"B":2,"a":3,"A":4}`, `{"A":4,"B":2,"a":3,"b":1}`},
		{"nested objects sorted too", `{"b":{"y":1,"x":[{"d":1,"c":2}]},"a":0}`, `{"a":0,"b":{"x":[{"c":2,"d":1}],"y":1}}`},
		{"values move with their names", `{"b":"a","a":"b"}`, `{"a":"b","b":"a"}`},
		{"arrays keep their order", `[3,1,2]`, `[3,1,2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, canonical(t, tt.in))
		})
	}
}

// A large object takes the general sort rather than the insertion sort of small objects.
func TestSortLargeObject(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{2, 12, 13, 100, 1000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%05d", i)
		}
		var want strings.Builder
		want.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				want.WriteByte(',')
			}
			fmt.Fprintf(&want, "%q:%d", k, i)
		}
		want.WriteByte('}')
		r.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var in strings.Builder
		in.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				in.WriteString(" , ")
			}
			idx, _ := strconv.Atoi(k[1:])
			fmt.Fprintf(&in, "%q : %d", k, idx)
		}
		in.WriteString(" }")
		assert.Equal(t, want.String(), canonical(t, in.String()), "%d members", n)
	}
}

// The purpose of the package: payloads that differ only in key order, whitespace and the
// spelling of equal values have one fingerprint.
func TestWhitespaceAndOrderDoNotMatter(t *testing.T) {
	const want = `{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B/2"}],` +
		`"metadata":{"note":"café\n","ok":true,"ref":null},"rate":0.2}`
	variants := []string{
		want,
		`{"rate":0.2,"metadata":{"ref":null,"ok":true,"note":"café\n"},"items":[{"sku":"A-1","qty":2},{"sku":"B/2","qty":1}],"currency":"eur","amount":1250}`,
		"\n{\r\n\t\"amount\" : 1250 ,\n \"currency\":\t\"eur\",\"items\" : [ {\"qty\":2,\"sku\":\"A-1\"} , {\"qty\":1,\"sku\":\"B/2\"} ],\n\"metadata\":{\"note\":\"café\\n\",\"ok\":true,\"ref\":null},\"rate\":0.2 }\n  ",
		`{"amount":1250.0,"currency":"\u0065ur","items":[{"qty":2E0,"sku":"A\u002d1"},{"qty":1,"sku":"B\/2"}],"metadata":{"note":"caf\u00e9\u000a","ok":true,"ref":null},"rate":2e-1}`,
		`{"amount":1.25e3,"currency":"eur","items":[{"qty":20e-1,"sku":"A-1"},{"qty":0.1e1,"sku":"B/2"}],"metadata":{"ok":true,"note":"caf\u00E9\n","ref":null},"rate":0.20000000000000000}`,
	}
	wantSum := sha256.Sum256([]byte(want))
	for i, v := range variants {
		assert.Equal(t, want, canonical(t, v), "variant %d", i)
		sum, err := canon.Fingerprint([]byte(v))
		require.NoError(t, err)
		assert.Equal(t, wantSum, sum, "variant %d", i)
	}
}

// The other half of the purpose: any change of a value, a name, a type or the order of an
// array changes the fingerprint.
func TestChangedValueMatters(t *testing.T) {
	payloads := []string{
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1251,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250.5,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":-1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":"1250","currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"EUR","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur ","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":1,"sku":"B-2"},{"qty":2,"sku":"A-1"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":1,"sku":"A-1"},{"qty":2,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":"","gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":false,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":true,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":[]}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"V"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"K":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v","x":1}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v\u0000"}}`,
		`{"Amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"},"x":null}`,
		`{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":"{\"k\":\"v\"}"}`,
		`[{"amount":1250,"currency":"eur","items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"note":null,"gift":false,"meta":{"k":"v"}}]`,
		`{"a":1,"b":2}`,
		`{"a":2,"b":1}`,
		`{"a":"b","c":"d"}`,
		`{"a":"b,c","d":"e"}`,
		`{"a":"\ue000"}`,
		"{\"a\":\"\U0001F600\"}",
		`"1"`,
		`1`,
		`1.0000000000000002`,
		`0.1`,
		`[]`,
		`{}`,
		`""`,
		`null`,
	}
	seen := map[[32]byte]string{}
	for _, p := range payloads {
		sum, err := canon.Fingerprint([]byte(p))
		require.NoError(t, err, p)
		if prev, ok := seen[sum]; ok {
			t.Errorf("same fingerprint:\n%s\n%s", prev, p)
		}
		seen[sum] = p
	}
}

func TestInvalid(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"only whitespace", " \n\t "},
		{"truncated object", `{"a":1`},
		{"truncated after name", `{"a"`},
		{"truncated after colon", `{"a":`},
		{"truncated array", `[1,2`},
		{"truncated string", `"abc`},
		{"truncated escape", `"ab\`},
		{"truncated unicode escape", `"\u12`},
		{"truncated literal", `tru`},
		{"truncated UTF-8", "\"\xe2\x82\""},
		{"minus alone", `-`},
		{"fraction without digits", `1.`},
		{"exponent without digits", `1e`},
		{"exponent sign without digits", `1e+`},
		{"trailing garbage", `{} x`},
		{"two values", `1 2`},
		{"two objects", `{}{}`},
		{"trailing comma in array", `[1,]`},
		{"trailing comma in object", `{"a":1,}`},
		{"leading comma", `[,1]`},
		{"empty member", `{,}`},
		{"missing colon", `{"a" 1}`},
		{"missing comma", `[1 2]`},
		{"missing value", `{"a":}`},
		{"unquoted name", `{a:1}`},
		{"number as name", `{1:1}`},
		{"single quotes", `'a'`},
		{"closing brace alone", `}`},
		{"closing bracket alone", `]`},
		{"mismatched brackets", `[}`},
		{"duplicate key", `{"a":1,"a":2}`},
		{"duplicate key with equal values", `{"a":1,"a":1}`},
		{"duplicate key after sorting", `{"b":1,"a":2,"b":3}`},
		{"duplicate key spelled with an escape", `{"a":1,"\u0061":2}`},
		{"duplicate key, nested", `[{"x":{"b":1,"a":0,"b":2}}]`},
		{"duplicate key in a large object", `{"m":0,"l":0,"k":0,"j":0,"i":0,"h":0,"g":0,"f":0,"e":0,"d":0,"c":0,"b":0,"a":0,"g":1}`},
		{"invalid UTF-8", "\"\xff\""},
		{"invalid UTF-8 in a name", "{\"\xfe\":1}"},
		{"overlong UTF-8", "\"\xc0\xaf\""},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\""},
		{"lone high surrogate", `"\ud800"`},
		{"lone low surrogate", `"\udc00"`},
		{"high surrogate then a letter", `"\ud800a"`},
		{"high surrogate then a BMP escape", `"\ud800\u0041"`},
		{"two high surrogates", `"\ud800\ud800"`},
		{"swapped surrogates", `"\ude00\ud83d"`},
		{"lone surrogate in a name", `{"\udfff":1}`},
		{"invalid escape", `"\x41"`},
		{"invalid hex", `"\u12G4"`},
		{"raw newline in string", "\"a\nb\""},
		{"raw tab in string", "\"a\tb\""},
		{"raw NUL in string", "\"a\x00b\""},
		{"too deep arrays", strings.Repeat("[", 129) + strings.Repeat("]", 129)},
		{"too deep objects", strings.Repeat(`{"a":`, 129) + "1" + strings.Repeat("}", 129)},
		{"too deep, mixed", strings.Repeat(`[{"a":`, 65) + "1" + strings.Repeat("}]", 65)},
		{"hostile depth", strings.Repeat("[", 100000)},
		{"1e400", `1e400`},
		{"-1e400", `-1e400`},
		{"1e400 inside", `{"a":[1e400]}`},
		{"integer beyond a double", strings.Repeat("9", 400)},
		{"leading zero", `01`},
		{"negative leading zero", `-01`},
		{"double zero", `00`},
		{"plus sign", `+1`},
		{"leading dot", `.5`},
		{"minus dot", `-.5`},
		{"NaN", `NaN`},
		{"Infinity", `Infinity`},
		{"-Infinity", `-Infinity`},
		{"hexadecimal", `0x10`},
		{"capitalized literal", `True`},
		{"literal too long", `nulll`},
		{"literal too short", `nul`},
		{"byte order mark", "\xef\xbb\xbf{}"},
		{"comment", "// c\n1"},
		{"form feed is not whitespace", "\f1"},
		{"no-break space is not whitespace", "\u00a01"},
		{"NUL after the value", "1\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("keep")
			out, err := canon.Append(prefix, []byte(tt.in))
			require.Error(t, err, "output %q", out)
			assert.ErrorIs(t, err, canon.ErrInvalid)
			assert.Equal(t, "keep", string(out), "dst returned unchanged")
			out, xerr := canon.AppendExact(prefix, []byte(tt.in))
			_, ferr := canon.Fingerprint([]byte(tt.in))
			if strings.Contains(err.Error(), "out of the range of a double") {
				// Exact numbers have no range.
				assert.NoError(t, xerr)
				assert.NoError(t, ferr)
				return
			}
			assert.ErrorIs(t, xerr, canon.ErrInvalid)
			assert.Equal(t, "keep", string(out), "dst returned unchanged")
			assert.ErrorIs(t, ferr, canon.ErrInvalid)
		})
	}
}

// Errors say what and where, so that a rejected payload can be fixed.
func TestErrorDetail(t *testing.T) {
	_, err := canon.Append(nil, []byte(`{"b":1,"a":2,"b":3}`))
	require.Error(t, err)
	assert.Equal(t, "canon: invalid JSON: duplicate member name at offset 13", err.Error())
	_, err = canon.Append(nil, []byte(`[1, 1e400]`))
	require.Error(t, err)
	assert.Equal(t, "canon: invalid JSON: number out of the range of a double at offset 4", err.Error())
	assert.True(t, errors.Is(err, canon.ErrInvalid))
}

func TestDepthLimit(t *testing.T) {
	arrays := strings.Repeat("[", 128) + strings.Repeat("]", 128)
	assert.Equal(t, arrays, canonical(t, arrays))
	objects := strings.Repeat(`{"a":`, 127) + "[1]" + strings.Repeat("}", 127)
	assert.Equal(t, objects, canonical(t, objects))
}

func TestLiterals(t *testing.T) {
	for _, in := range []string{"true", "false", "null", `[true,false,null]`, `{"t":true}`} {
		assert.Equal(t, in, canonical(t, " "+in+"\n"))
	}
}

// Append appends: it keeps what dst holds and may write into its spare capacity.
func TestAppendExtendsDst(t *testing.T) {
	dst := make([]byte, 0, 64)
	dst = append(dst, "sig="...)
	out, err := canon.Append(dst, []byte(`{"b":[1, 2],"a":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, `sig={"a":"x","b":[1,2]}`, string(out))
	assert.Equal(t, &dst[:1][0], &out[:1][0], "spare capacity used")

	out, err = canon.Append(nil, []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(out))
}

// Fingerprint reuses pooled buffers: concurrent calls must not see each other's output.
func TestFingerprintConcurrent(t *testing.T) {
	inputs := [][]byte{
		[]byte(`{"b":2,"a":1}`),
		[]byte(`{"z":[3,2,1],"y":{"q":"` + strings.Repeat("x", 100000) + `","p":0}}`),
		[]byte(`[1e400,9007199254740993]`),
		[]byte(`"` + strings.Repeat("é", 1000) + `"`),
		[]byte(`{"a":1,"a":2}`),
	}
	want := make([][32]byte, len(inputs))
	wantErr := make([]bool, len(inputs))
	for i, in := range inputs {
		out, err := canon.AppendExact(nil, in)
		wantErr[i] = err != nil
		want[i] = sha256.Sum256(out)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				i := (g + n) % len(inputs)
				sum, err := canon.Fingerprint(inputs[i])
				if wantErr[i] {
					assert.ErrorIs(t, err, canon.ErrInvalid)
					continue
				}
				assert.NoError(t, err)
				assert.Equal(t, want[i], sum)
			}
		})
	}
	wg.Wait()
}

func ExampleAppend() {
	out, err := canon.Append(nil, []byte(`{ "b": [1.0, 2e-3, "\u00e9"], "a": -0 }`))
	fmt.Println(string(out), err)
	// Output: {"a":0,"b":[1,0.002,"é"]} <nil>
}

// benchPayload is a request payload of about 1 KB of the kind fingerprinted for idempotency:
// members out of order, nested objects and arrays, escapes, non-ASCII text, decimals.
var benchPayload = []byte(`{
  "type": "payment_intent.create",
  "amount": 129900,
  "currency": "eur",
  "confirm": true,
  "capture_method": "automatic",
  "customer": {"name": "Zoë Müller", "email": "zoe.mueller@example.com", "phone": "+49 30 901820",
    "address": {"line1": "Friedrichstraße 123", "city": "Berlin", "postal_code": "10117", "country": "DE"}},
  "items": [
    {"sku": "SKU-000123", "title": "Noise-cancelling headphones", "qty": 1, "unit_price": 999.0, "tax_rate": 0.19},
    {"sku": "SKU-000456", "title": "USB-C cable, 2 m", "qty": 3, "unit_price": 99.5, "tax_rate": 0.19},
    {"sku": "SKU-000789", "title": "Gift wrap \"deluxe\"", "qty": 1, "unit_price": 1.5e1, "tax_rate": 0.07}
  ],
  "metadata": {"order_id": "ord_8f2c1e", "channel": "web", "note": "Leave at the door\nRing twice",
    "campaign": null, "ab_bucket": 7, "ts": 1718035200123},
  "shipping": {"carrier": "dhl", "service": "express", "cost": 12.99, "eta_days": [1, 2]},
  "payment_method_types": ["card", "sepa_debit", "paypal"],
  "statement_descriptor": "REMEDY SHOP \u2013 ORDER",
  "return_url": "https:\/\/shop.example.com\/checkout\/complete?session=cs_test_a1b2c3"
}`)

// BenchmarkAppend measures canonicalization of benchPayload beside the obvious alternative with
// the standard library, decoding into any and encoding again (which sorts map keys, though its
// output is not RFC 8785: it escapes <, > and &, and writes numbers its own way).
func BenchmarkAppend(b *testing.B) {
	b.Run("canon", func(b *testing.B) {
		b.SetBytes(int64(len(benchPayload)))
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			buf, err = canon.Append(buf[:0], benchPayload)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fingerprint", func(b *testing.B) {
		b.SetBytes(int64(len(benchPayload)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := canon.Fingerprint(benchPayload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(benchPayload)))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(benchPayload, &v); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The benchmark payload must be what it claims: about 1 KB, valid, and not already canonical.
func TestBenchPayload(t *testing.T) {
	assert.InDelta(t, 1024, len(benchPayload), 200)
	out := canonical(t, string(benchPayload))
	assert.NotEqual(t, string(benchPayload), out)
	assert.True(t, bytes.HasPrefix([]byte(out), []byte(`{"amount":129900,"capture_method":"automatic","confirm":true,`)), out)
	assert.True(t, json.Valid([]byte(out)))
}
