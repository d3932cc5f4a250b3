// Package waits reads the waits a server states in its headers, as the envelope's parser and
// the client's pacing and polling both read them: Retry-After (delta-seconds or an HTTP-date),
// the rate-limit reset headers, and a time measured from the answer's Date.
package waits

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Now is the clock HTTP-date and epoch headers are measured against when the response has no
// Date header. Tests replace it.
var Now = time.Now

// Wait is a server-supplied wait and whether one was given at all.
type Wait struct {
	D  time.Duration
	OK bool
}

// RetryAfter reads a Retry-After value: delta-seconds, or an HTTP-date measured from date (the
// answer's Date header, or Now without one).
func RetryAfter(v, date string) Wait {
	v = strings.TrimSpace(v)
	if v == "" {
		return Wait{}
	}
	if c := v[0]; c >= '0' && c <= '9' || c == '-' || c == '.' {
		return FromFloat(ParseFloat(v), float64(time.Second))
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return Wait{}
	}
	return Until(t, date)
}

// Until is the wait from date (the answer's Date header, or Now without one) to t; a time
// already past is no wait.
func Until(t time.Time, date string) Wait {
	ref := Now()
	if date != "" {
		if dt, err := http.ParseTime(date); err == nil {
			ref = dt
		}
	}
	d := t.Sub(ref)
	if d < 0 {
		d = 0
	}
	return Wait{D: d, OK: true}
}

// resetHeaders are the headers Reset reads, in their canonical form (RateLimit-Reset,
// X-RateLimit-Reset, X-Rate-Limit-Reset as servers spell them).
var resetHeaders = [...]string{"Ratelimit-Reset", "X-Ratelimit-Reset", "X-Rate-Limit-Reset"}

// Reset reads RateLimit-Reset, X-RateLimit-Reset or X-Rate-Limit-Reset from h: seconds until
// the reset, or an epoch timestamp (GitHub) measured from date.
func Reset(h http.Header, date string) Wait {
	for _, name := range resetHeaders {
		vs := h[name] // canonical names: a map lookup, without Get's canonicalization
		if len(vs) == 0 {
			continue
		}
		v := strings.TrimSpace(vs[0])
		if v == "" {
			continue
		}
		f := ParseFloat(v)
		if f > 1e9 { // an epoch timestamp (GitHub), not a delta
			sec, frac := math.Modf(f)
			return Until(time.Unix(int64(sec), int64(frac*1e9)), date)
		}
		if w := FromFloat(f, float64(time.Second)); w.OK {
			return w
		}
	}
	return Wait{}
}

// FromFloat applies the validity rules every source shares: NaN and negative values are
// ignored; values too large for a Duration saturate.
func FromFloat(f, unit float64) Wait {
	if math.IsNaN(f) || f < 0 {
		return Wait{}
	}
	ns := f * unit
	if ns >= math.MaxInt64 {
		return Wait{D: time.Duration(math.MaxInt64), OK: true}
	}
	return Wait{D: time.Duration(ns), OK: true}
}

// ParseFloat reads a decimal number; NaN when s is not one (an overflow is ±Inf).
func ParseFloat(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}
