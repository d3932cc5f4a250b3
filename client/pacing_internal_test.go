package client

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// FuzzRateLimitFields feeds the readers of the RateLimit fields arbitrary values, seeded with
// each family's spelling, and checks what must hold for any server's answer: no panic; no
// count below zero; no hold, reset or window further ahead than maxPaceHold, however far
// ahead the server says; and a pacer fed the result holds no key past that.
func FuzzRateLimitFields(f *testing.F) {
	f.Add(`"default";r=0;t=30`, `"default";q=50;w=1`, "0", "1795827660", "Sat, 28 Nov 2026 01:00:00 GMT", "3", "6m0s", "2026-11-28T01:00:20Z")
	f.Add(`limit=10, remaining=2, reset=12`, `"tokens";q=1000;w=60;qu="tokens"`, "5", "7", "", "0", "1s", "9999-12-31T23:59:59Z")
	f.Add(`"a";r=999999999999999999999;t=999999999999`, `"a";q=-1;w=99999999999999`, "99999999999999999999", "9e18", "garbage", "-1", "-5s", "0001-01-01T00:00:00Z")
	f.Fuzz(func(t *testing.T, field, policy, remaining, reset, date, requests, requestsReset, anthropicReset string) {
		h := http.Header{}
		for k, v := range map[string]string{
			"Ratelimit": field, "Ratelimit-Policy": policy,
			"X-Ratelimit-Remaining": remaining, "X-Ratelimit-Reset": reset, "Date": date,
			"X-Ratelimit-Remaining-Requests": requests, "X-Ratelimit-Reset-Requests": requestsReset,
			"Anthropic-Ratelimit-Requests-Remaining": requests, "Anthropic-Ratelimit-Requests-Reset": anthropicReset,
		} {
			if v != "" {
				h.Set(k, v)
			}
		}
		for _, rf := range rateFields(h) {
			if rf.remaining < 0 || rf.quota < 0 {
				t.Fatalf("a count below zero: %+v", rf)
			}
			if rf.reset.D < 0 || rf.reset.D > maxPaceHold || rf.window < 0 || rf.window > maxPaceHold {
				t.Fatalf("a reset or window out of bounds: %+v", rf)
			}
		}
		at := time.Now()
		for _, status := range []int{http.StatusOK, http.StatusTooManyRequests} {
			l := limitOf(&Response{Status: status, Header: h}, at)
			if l.Remaining < 0 || l.Quota < 0 || l.Window < 0 || l.Window > maxPaceHold {
				t.Fatalf("a limit out of bounds: %+v", l)
			}
			for _, end := range []time.Time{l.Until, l.Reset} {
				if !end.IsZero() && (end.Before(at) || end.After(at.Add(maxPaceHold))) {
					t.Fatalf("a time out of bounds, %v from the answer: %+v", end.Sub(at), l)
				}
			}
			p := NewPacer()
			ctx := context.Background()
			if err := p.Learn(ctx, "k", l); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				u, err := p.Take(ctx, "k")
				if err != nil {
					t.Fatal(err)
				}
				if u.After(time.Now().Add(2 * maxPaceHold)) {
					t.Fatalf("the pacer holds the key %v ahead", time.Until(u))
				}
			}
		}
	})
}

// TestStatesLimit: every header rateFields reads, in any spelling a server sends it, makes
// statesLimit look further; an answer without one is not looked into.
func TestStatesLimit(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"RateLimit", "RateLimit-Policy", "RateLimit-Remaining", "RateLimit-Reset",
		"x-ratelimit-remaining", "X-RateLimit-Reset", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset",
		"x-ratelimit-remaining-requests", "x-ratelimit-reset-tokens", "X-RateLimit-Resource",
		"anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-output-tokens-reset",
	} {
		h := http.Header{}
		h.Set(name, "1")
		if !statesLimit(h) {
			t.Errorf("%s: not seen", name)
		}
	}
	h := http.Header{}
	for _, name := range []string{"Content-Type", "Date", "Retry-After", "Rate", "X-Rate", "X-Request-Id"} {
		h.Set(name, "1")
	}
	if statesLimit(h) {
		t.Errorf("%v: seen as stating a limit", h)
	}
	// Read whole: a reset named in any spelling is found.
	h = http.Header{}
	h.Set("x-ratelimit-remaining", "0")
	h.Set("x-ratelimit-reset", "30")
	if f := rateFields(h); len(f) != 1 || f[0].remaining != 0 || f[0].reset.D != 30*time.Second {
		t.Errorf("rateFields = %+v", f)
	}
}
