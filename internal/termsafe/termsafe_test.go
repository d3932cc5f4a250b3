package termsafe_test

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/remedy-go/remedy/internal/termsafe"
)

func TestString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text, 1.5 €; C:\\path", "plain text, 1.5 €; C:\\path"},
		{"", ""},
		{"\x1b]0;title\x07\x1b[2K\x1b[1A", `\x1b]0;title\x07\x1b[2K\x1b[1A`},
		{"a\r\nb\tc", `a\r\nb\tc`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"txt.exe\u202egnp.", `txt.exe\u202egnp.`},
		{"\u2066isolate\u2069 \u200e\u200f\u061c", `\u2066isolate\u2069 \u200e\u200f\u061c`},
		{"zero\u200bwidth\u200d\ufeff", `zero\u200bwidth\u200d\ufeff`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"tag\U000e0041", `tag\U000e0041`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"hangul filler\u3164", `hangul filler\u3164`},
		{"emoji ✓ kept", "emoji ✓ kept"},
	} {
		got := termsafe.String(tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
		assert.Equal(t, tc.in == tc.want, termsafe.Safe(tc.in), "%q", tc.in)
		assert.True(t, termsafe.Safe(got), "the escaped text is safe: %q", got)
	}
}

func FuzzString(f *testing.F) {
	f.Add("\x1b[2Kapprove\u202e")
	f.Add("plain")
	f.Fuzz(func(t *testing.T, s string) {
		got := termsafe.String(s)
		if !termsafe.Safe(got) {
			t.Fatalf("String(%q) = %q still holds a hidden character", s, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("String(%q) = %q is not UTF-8", s, got)
		}
		if termsafe.Safe(s) != (got == s) {
			t.Fatalf("Safe(%q) disagrees with String", s)
		}
	})
}
