package jsonscan_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/remedy-go/remedy/internal/jsonscan"
)

func TestNumber(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12": true, "1.5": true, "-1.5e+10": true, "2E-3": true, "0.0": true,
		"": false, "-": false, "01": false, "1.": false, ".5": false, "1e": false, "1e+": false,
		"+1": false, "0x10": false, "1 ": false, "--1": false, "NaN": false, "Infinity": false,
	} {
		assert.Equal(t, want, jsonscan.IsNumber(s), "%q", s)
	}
	end, ok := jsonscan.Number(`12.5,"x"`, 0)
	assert.True(t, ok)
	assert.Equal(t, 4, end)
}

func TestString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lit       string
		ok, esc   bool
		unescaped string
	}{
		{`"plain"`, true, false, "plain"},
		{`""`, true, false, ""},
		{`"tab\tand \"quotes\" \\ \/"`, true, true, "tab\tand \"quotes\" \\ /"},
		{`"\u00e9t\u00C9"`, true, true, "étÉ"},
		{`"\ud83d\ude00"`, true, true, "😀"},
		{`"\ud83d alone"`, true, true, "\uFFFD alone"},
		{`"\ude00\ud83d"`, true, true, "\uFFFD\uFFFD"},
		{"\"caf\xc3\xa9\"", true, false, "café"},
		{`"open`, false, false, ""},
		{`"bad \x escape"`, false, true, ""},
		{`"short \u12"`, false, true, ""},
		{"\"ctrl \x01\"", false, false, ""},
		{"\"bad \xff utf-8\"", false, false, ""},
	} {
		end, esc, ok := jsonscan.String(c.lit, 1)
		assert.Equal(t, c.ok, ok, "%q", c.lit)
		if !c.ok {
			continue
		}
		assert.Equal(t, len(c.lit), end, "%q", c.lit)
		assert.Equal(t, c.esc, esc, "%q", c.lit)
		assert.Equal(t, c.unescaped, jsonscan.Unescape(c.lit[1:end-1]), "%q", c.lit)
	}
}

// TestStringPrefix: a string cut anywhere, even inside an escape or a UTF-8 sequence, is Cut;
// one that no continuation can make valid is Bad.
func TestStringPrefix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lit  string
		want jsonscan.State
	}{
		{`"whole"`, jsonscan.Whole},
		{`"open`, jsonscan.Cut},
		{`"esc \`, jsonscan.Cut},
		{`"esc \u00`, jsonscan.Cut},
		{"\"caf\xc3", jsonscan.Cut},
		{"\"euro \xe2\x82", jsonscan.Cut},
		{`"bad \x`, jsonscan.Bad},
		{`"bad \u00g`, jsonscan.Bad},
		{"\"ctrl \x01", jsonscan.Bad},
		{"\"bad \xff", jsonscan.Bad},
		{"\"bad \xe2A", jsonscan.Bad},
	} {
		_, _, st := jsonscan.StringPrefix(c.lit, 1)
		assert.Equal(t, c.want, st, "%q", c.lit)
	}
}

func TestSkipWS(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 4, jsonscan.SkipWS(" \t\r\nx", 0))
	assert.Equal(t, 2, jsonscan.SkipWS("ab", 2))
	assert.Equal(t, 1, jsonscan.SkipWS("a\v", 1), "a vertical tab is not JSON whitespace")
}

func TestNext(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s        string
		next     int
		more, ok bool
	}{
		{` , "b"`, 3, true, true},
		{`  }`, 3, false, true},
		{`]`, 0, false, false}, // not the closer asked for
		{`  `, 2, false, false},
		{`x`, 0, false, false},
	} {
		next, more, ok := jsonscan.Next(c.s, 0, '}')
		assert.Equal(t, []any{c.next, c.more, c.ok}, []any{next, more, ok}, "%q", c.s)
	}
}

// FuzzScan holds the scanners to encoding/json: a number or string literal they accept is
// one it accepts, decoded to the same value, and one it accepts in valid UTF-8 they accept.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`12.5e-3`, `-0`, `"a\u00e9\n"`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `01`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if jsonscan.IsNumber(s) {
			var n json.Number
			if err := json.Unmarshal([]byte(s), &n); err != nil {
				t.Fatalf("IsNumber(%q), but encoding/json: %v", s, err)
			}
			if _, err := strconv.ParseFloat(s, 64); err != nil && err.(*strconv.NumError).Err != strconv.ErrRange {
				t.Fatalf("IsNumber(%q), but ParseFloat: %v", s, err)
			}
		} else if s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
			var n json.Number
			if json.Unmarshal([]byte(s), &n) == nil && s == n.String() {
				t.Fatalf("encoding/json reads %q as a number, IsNumber does not", s)
			}
		}
		lit := `"` + s + `"`
		end, _, ok := jsonscan.String(lit, 1)
		if ok { // every cut of a valid string is Cut, never Bad
			for k := 1; k < end; k++ {
				if _, _, st := jsonscan.StringPrefix(lit[:k], 1); st != jsonscan.Cut {
					t.Fatalf("StringPrefix(%q) = %v, a cut of the valid %q", lit[:k], st, lit[:end])
				}
			}
		}
		var want string
		err := json.Unmarshal([]byte(lit), &want)
		switch {
		case ok && end == len(lit):
			if err != nil {
				t.Fatalf("String accepts %q, encoding/json does not: %v", lit, err)
			}
			if got := jsonscan.Unescape(s); got != want {
				t.Fatalf("Unescape(%q) = %q, encoding/json: %q", s, got, want)
			}
		case ok: // closed early, by a quote inside s
		case err == nil && utf8.ValidString(lit):
			t.Fatalf("encoding/json accepts %q, String does not", lit)
		}
	})
}
