// Package prose holds what remedy's texts for people and models share: a value clipped to a
// length, a message on one line, a wait as a person reads it, a secret withheld.
package prose

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remedy-go/remedy/internal/jsonw"
)

// Limits that keep a text handed to a model short.
const (
	MaxText   = 160 // a message or free text quoted in one line
	MaxIssues = 6   // issues listed; the rest are counted
	MaxValue  = 100 // a JSON value quoted in one line
)

// Withheld replaces a secret in text for a model.
const Withheld = "[withheld]"

// Clip cuts s to at most n bytes, at a rune boundary, marking the cut with "…"; invalid UTF-8
// is replaced first.
func Clip(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// OneLine trims s and joins its lines and tabs with single spaces.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\r\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// Duration is d as a person reads it: rounded to the millisecond from a second up, and "more
// than 100 years" for the longest.
func Duration(d time.Duration) string {
	if d >= 1<<62 {
		return "more than 100 years"
	}
	if d >= time.Second {
		d = d.Round(time.Millisecond)
	}
	return d.String()
}

// Redact replaces every secret in s by [withheld]. An empty secret is none.
func Redact(s string, secrets []string) string {
	for _, x := range secrets {
		if x != "" && strings.Contains(s, x) {
			s = strings.ReplaceAll(s, x, Withheld)
		}
	}
	return s
}

// Value renders a raw JSON value on one line, clipped to MaxValue bytes; what is not valid JSON
// is shown as a string.
func Value(v []byte) string { return Clip(jsonw.Inline(v), MaxValue) }
