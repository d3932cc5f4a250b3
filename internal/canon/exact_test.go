package canon_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/internal/canon"
)

// exactForm is the exact canonical form of in, failing the test if in is rejected.
func exactForm(t *testing.T, in string) string {
	t.Helper()
	out, err := canon.AppendExact(nil, []byte(in))
	require.NoError(t, err, "input %q", in)
	return string(out)
}

// Every spelling of one exact value has one form, placed as ECMAScript places a double's
// digits; the digits are the literal's, however many.
func TestExactNumbers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"0.000", "0"},
		{"0e-999999999999999999999", "0"},
		{"-0", "-0"}, // a value of its own: a float64 keeps its sign
		{"-0.0", "-0"},
		{"-0E+7", "-0"},
		{"1", "1"},
		{"1.0", "1"},
		{"1e0", "1"},
		{"10e-1", "1"},
		{"0.1e1", "1"},
		{"100E-2", "1"},
		{"-1.50", "-1.5"},
		{"2e-3", "0.002"},
		{"0.000001", "0.000001"},
		{"0.0000001", "1e-7"},
		{"1E30", "1e+30"},
		{"1e20", "100000000000000000000"},
		{"100000000000000000000", "100000000000000000000"},
		{"1e21", "1e+21"},
		{"1000000000000000000000", "1e+21"},
		{"1234567890123456789012", "1.234567890123456789012e+21"},
		{"123456789012345678901", "123456789012345678901"},
		{"12345678901234567890.1", "12345678901234567890.1"},
		{"9007199254740993", "9007199254740993"},
		{"9007199254740993.000", "9007199254740993"},
		{"9.007199254740993e15", "9007199254740993"},
		{"90071992547409930e-1", "9007199254740993"},
		{"-9007199254740993", "-9007199254740993"},
		{"1152921504606847076", "1152921504606847076"},
		{"18446744073709551615", "18446744073709551615"},
		{"0.10000000000000001", "0.10000000000000001"},
		{"333333333.33333329", "333333333.33333329"},
		{"1e400", "1e+400"},
		{"10e399", "1e+400"},
		{"0.01e402", "1e+400"},
		{"1e-400", "1e-400"},
		{"-1e-400", "-1e-400"},
		{"123.456e-400", "1.23456e-398"},
		{"1e999999999", "1e+999999999"},
		{"1e999999998", "1e+999999998"},
		{"1e-999999999", "1e-999999999"},
		{"5e-324", "5e-324"},
		{"4.9406564584124654e-324", "4.9406564584124654e-324"},
		{strings.Repeat("9", 400), "9." + strings.Repeat("9", 399) + "e+399"},
		{"0." + strings.Repeat("0", 300) + "12", "1.2e-301"},
		// Exponents too long for an int64, added to as text.
		{"1e99999999999999999999", "1e+99999999999999999999"},
		{"10e99999999999999999999", "1e+100000000000000000000"},
		{"0.1e100000000000000000000", "1e+99999999999999999999"},
		{"0.001e100000000000000000000", "1e+99999999999999999997"},
		{"123.4e-99999999999999999999", "1.234e-99999999999999999997"},
		{"0.0012e-100000000000000000000", "1.2e-100000000000000000003"},
		{"1e+0000000000000000000000000000000000000042", "1e+42"},
		{"1e-0000000000000000000000000000000000000007", "1e-7"},
		{"1.5e0000000000000000000000000000000000000001", "15"},
		{"1e1000000000000000", "1e+1000000000000000"},
		{"1e999999999999999", "1e+999999999999999"},
		{"12e999999999999999", "1.2e+1000000000000000"},
		{"0.1e1000000000000000", "1e+999999999999999"},
		{"0.01e-999999999999999", "1e-1000000000000001"},
	}
	for _, tt := range tests {
		t.Run(tt.in[:min(len(tt.in), 48)], func(t *testing.T) {
			assert.Equal(t, tt.want, exactForm(t, tt.in))
			assert.Equal(t, "["+tt.want+"]", exactForm(t, "[ "+tt.in+" ]"), "inside an array")
			assert.True(t, json.Valid([]byte(tt.want)), "the output is a JSON number")
		})
	}
}

// On a number that a double holds exactly in its shortest digits, the exact form is RFC 8785's:
// exact fingerprints of ordinary payloads are the fingerprints they always were.
func TestExactAgreesWithJCS(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	check := func(f float64) {
		t.Helper()
		for _, s := range []string{
			strconv.FormatFloat(f, 'g', -1, 64),
			strconv.FormatFloat(f, 'e', -1, 64),
			strconv.FormatFloat(f, 'f', -1, 64),
		} {
			if f == 0 && math.Signbit(f) {
				continue // RFC 8785 writes -0 as 0
			}
			assert.Equal(t, canonical(t, s), exactForm(t, s), "%s", s)
		}
	}
	for range 20000 {
		if f := math.Float64frombits(r.Uint64()); !math.IsNaN(f) && !math.IsInf(f, 0) {
			check(f)
		}
		check(float64(r.Int63n(1<<53)) * math.Pow10(r.Intn(40)-20))
	}
	for _, f := range []float64{0, 1, -1, 0.1, 1e21, 1e-7, 1e-6, 9007199254740992, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		check(f)
	}
	assert.Equal(t, canonical(t, string(benchPayload)), exactForm(t, string(benchPayload)))
}

// What the JCS fingerprint got wrong (issue 22): numbers that one double stands for are told
// apart, and numbers beyond a double are fingerprinted, not refused.
func TestFingerprintIsExact(t *testing.T) {
	distinct := [][2]string{
		{`{"account":9007199254740993}`, `{"account":9007199254740992}`},
		{`{"amount":1152921504606846976}`, `{"amount":1152921504606847076}`},
		{`[0.1]`, `[0.10000000000000001]`},
		{`1e-400`, `0`},
		{`1e-400`, `2e-400`},
		{`-0`, `0`},
		{`1e999999999`, `1e999999998`},
		{`1e400`, `1e401`},
		{`1e99999999999999999999`, `1e99999999999999999998`},
		{`1e99999999999999999999`, `1e-99999999999999999999`},
		{strings.Repeat("9", 400), strings.Repeat("9", 399) + "8"},
	}
	for _, p := range distinct {
		a, err := canon.Fingerprint([]byte(p[0]))
		require.NoError(t, err, p[0])
		b, err := canon.Fingerprint([]byte(p[1]))
		require.NoError(t, err, p[1])
		assert.NotEqual(t, a, b, "%s and %s", p[0], p[1])
	}
	same := [][2]string{
		{`{"account":9007199254740993,"x":1}`, ` { "x" : 1.0 , "account" : 9007199254740993 } `},
		{`1e400`, `10e399`},
		{`-0`, `-0.0e5`},
		{`[1152921504606847076]`, `[1.152921504606847076e18]`},
	}
	for _, p := range same {
		a, err := canon.Fingerprint([]byte(p[0]))
		require.NoError(t, err, p[0])
		b, err := canon.Fingerprint([]byte(p[1]))
		require.NoError(t, err, p[1])
		assert.Equal(t, a, b, "%s and %s", p[0], p[1])
	}
}

// A hostile exponent costs its length, not its value: output within a few bytes of the
// literal, and time linear in it.
func TestExactHostileExponents(t *testing.T) {
	for _, n := range []int{10, 1000, 1 << 20} {
		exp := "9" + strings.Repeat("0", n-1)
		for _, in := range []string{"1e" + exp, "1.5e-" + exp, "0.000123e" + exp, "12345e" + exp} {
			out := exactForm(t, in)
			assert.LessOrEqual(t, len(out), len(in)+3, "%.40s", in)
		}
	}
	// Long runs of digits on both sides of the point, and of zeros.
	long := strings.Repeat("1234567890", 1<<16)
	in := long + "." + long + "e-" + strconv.Itoa(len(long))
	out := exactForm(t, in)
	assert.Equal(t, "0."+strings.TrimRight(long+long, "0"), out)
	zeros := "0." + strings.Repeat("0", 1<<20) + "1"
	assert.Equal(t, fmt.Sprintf("1e-%d", 1<<20+1), exactForm(t, zeros))
}

// The cost of a fingerprint of hostile numbers, beside that of benchPayload (BenchmarkAppend).
func BenchmarkFingerprintNumbers(b *testing.B) {
	payload := []byte(`{"account":1152921504606847076,"amounts":[9007199254740993,0.10000000000000001,` +
		`1e999999999,-1.5e-99999999999999999999,123456789012345678901234567890.0987654321,` +
		`12.50,1e2,-0,0.000001]}`)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := canon.Fingerprint(payload); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleAppendExact() {
	out, err := canon.AppendExact(nil, []byte(`{ "b": [1.0, 9007199254740993, 1e400, 0.10000000000000001], "a": -0 }`))
	fmt.Println(string(out), err)
	jcs, _ := canon.Append(nil, []byte(`[9007199254740993, 0.10000000000000001]`))
	fmt.Println(string(jcs))
	// Output:
	// {"a":-0,"b":[1,9007199254740993,1e+400,0.10000000000000001]} <nil>
	// [9007199254740992,0.1]
}
