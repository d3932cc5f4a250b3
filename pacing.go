package remedy

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Pacing: a server's stated wait holds every call to its origin, through the Loop's Pacer.
// After each attempt the loop holds the origin until the time the server said a request can
// succeed (paceHold); before each attempt it waits for that time (pace), within the call's
// budgets, or stops at once with RetryLater, sending nothing.

// paceHold tells the pacer what the answer to an attempt said of the server's rate limit: a
// refusal that states its wait (a 429 or 503 with Retry-After, Retry-After-Ms, a body's
// retry_after_ms, a RetryInfo; a rate-limit failure with a reset), or an answer of any kind
// whose RateLimit fields say nothing remains until a reset. at is when the answer came.
func (r *run) paceHold(ctx context.Context, c *Call, resp *Response, at time.Time) {
	p := r.loop.Pacer
	if p == nil || c.Origin == "" || resp == nil {
		return
	}
	var d time.Duration
	if env := resp.Envelope; env != nil && env.RetryAfter > 0 && rateLimited(env) {
		d = env.RetryAfter
	}
	if w := exhausted(resp.Header); w.ok && w.d > d {
		d = w.d
	}
	if d <= 0 {
		return
	}
	until := at.Add(min(d, maxPaceHold))
	if err := p.Hold(ctx, c.Origin, until); err != nil {
		r.paceFailed(ctx, c, "hold", err)
	}
}

// maxPaceHold bounds what one answer can hold an origin for: a Retry-After of years parks no
// client (the loop refuses waits past Limits.MaxWait anyway, and says when to come back).
const maxPaceHold = 24 * time.Hour

// rateLimited reports whether a failure is a refusal that says when to come back: a 429, a
// 503, or a failure whose category is rate_limit.
func rateLimited(e *Envelope) bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable || e.Category == CategoryRateLimit
}

// pace waits, before an attempt of c, until the time the pacer holds for its origin. It returns
// how long it waited; or, when the wait would end past Limits.MaxWait, the call's elapsed
// budget or the context's deadline, the call's error, with nothing sent.
func (r *run) pace(ctx context.Context, c *Call, lim Limits) (time.Duration, *CallError) {
	p := r.loop.Pacer
	if p == nil || c.Origin == "" {
		return 0, nil
	}
	until, err := p.Until(ctx, c.Origin)
	if err != nil {
		r.paceFailed(ctx, c, "read", err)
		return 0, nil
	}
	d := time.Until(until)
	if d <= 0 {
		return 0, nil
	}
	var cause error
	var why string
	switch {
	case d > lim.MaxWait:
		cause, why = ErrWaitTooLong, "the server's stated wait for "+c.Origin+" is longer than the longest wait"
	case d > lim.MaxElapsed-time.Since(r.start):
		cause, why = ErrElapsedBudget, "the server's stated wait for "+c.Origin+" would end after the call's elapsed budget"
	case deadlineBefore(ctx, until):
		cause, why = ErrDeadline, "the server's stated wait for "+c.Origin+" would end after the context's deadline"
	}
	if cause != nil {
		e := r.fail(*c, cause, why+"; nothing was sent", nil, &RetryLater{After: d, At: until})
		e.Asked = d
		e.Detail += " (the server asked to wait " + d.String() + ")"
		return 0, e
	}
	if !sleep(ctx, d) {
		return d, r.fail(*c, ErrDeadline, "the context ended during the wait the server stated for "+c.Origin, nil, ctx.Err())
	}
	return d, nil
}

// paceFailed logs a pacer that failed: the call goes as it would without one.
func (r *run) paceFailed(ctx context.Context, c *Call, what string, err error) {
	if lg := r.loop.Logger; lg != nil {
		lg.DebugContext(ctx, "remedy pacer failed; the call is not paced", "operation", c.Operation, "origin", c.Origin, "step", what, "error", err.Error())
	}
}

// exhausted reads the RateLimit fields of any answer, a success's too: when they say nothing
// remains of a limit, the wait until its reset. The IETF fields, current
// (RateLimit: "policy";r=0;t=30) and older (RateLimit: limit=10, remaining=0, reset=30, and
// RateLimit-Remaining with RateLimit-Reset); X-RateLimit-Remaining: 0 with X-RateLimit-Reset
// (seconds, or an epoch as GitHub sends it); OpenAI's x-ratelimit-remaining-requests and
// -tokens with their resets ("6m0s"); Anthropic's anthropic-ratelimit-*-remaining with theirs
// (RFC 3339). Of several exhausted limits, the latest reset.
func exhausted(h http.Header) wait {
	if len(h) == 0 {
		return wait{}
	}
	best := rateLimitField(h.Values("Ratelimit"))
	for _, name := range [...]string{"Ratelimit-Remaining", "X-Ratelimit-Remaining", "X-Rate-Limit-Remaining"} {
		if v := h.Get(name); v != "" && strings.TrimSpace(v) == "0" {
			best = later(best, resetOf(h))
			break
		}
	}
	for _, kind := range [...][2]string{
		{"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
		{"X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
	} {
		if strings.TrimSpace(h.Get(kind[0])) != "0" {
			continue
		}
		if d, err := time.ParseDuration(strings.TrimSpace(h.Get(kind[1]))); err == nil && d >= 0 {
			best = later(best, wait{d: d, ok: true})
		}
	}
	for _, kind := range [...][2]string{
		{"Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
		{"Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
		{"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"},
		{"Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset"},
	} {
		if strings.TrimSpace(h.Get(kind[0])) != "0" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(h.Get(kind[1]))); err == nil {
			best = later(best, untilOf(h, t))
		}
	}
	return best
}

// resetOf reads h's reset header as the parser does (resetHeader), measured from its Date.
func resetOf(h http.Header) wait {
	p := parser{header: h}
	p.h.date = h.Get("Date")
	return p.resetHeader()
}

// untilOf is the wait until t, measured from h's Date as the parser measures it (until).
func untilOf(h http.Header, t time.Time) wait {
	p := parser{header: h}
	p.h.date = h.Get("Date")
	return p.until(t)
}

// later is the longer of two waits.
func later(a, b wait) wait {
	if b.ok && (!a.ok || b.d > a.d) {
		return b
	}
	return a
}

// rateLimitField reads the IETF RateLimit field: the current draft's list of policies,
// `"name";r=<remaining>;t=<seconds to reset>`, and the older dictionary, `limit=10,
// remaining=0, reset=30`. The wait is the latest reset among the policies with nothing
// remaining.
func rateLimitField(values []string) wait {
	var best wait
	for _, v := range values {
		var dict struct {
			remaining, reset string
		}
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			if k, val, ok := strings.Cut(item, "="); ok && !strings.Contains(k, ";") {
				// The older draft: one dictionary across the items.
				switch strings.TrimSpace(k) {
				case "remaining":
					dict.remaining = strings.TrimSpace(val)
				case "reset":
					dict.reset = strings.TrimSpace(val)
				}
				continue
			}
			// The current draft: a policy and its parameters.
			var r, t string
			params := strings.Split(item, ";")
			for _, param := range params[1:] {
				k, val, _ := strings.Cut(strings.TrimSpace(param), "=")
				switch k {
				case "r":
					r = val
				case "t":
					t = val
				}
			}
			if r == "0" {
				best = later(best, deltaSeconds(t))
			}
		}
		if dict.remaining == "0" {
			best = later(best, deltaSeconds(dict.reset))
		}
	}
	return best
}

// deltaSeconds reads a non-negative integer number of seconds.
func deltaSeconds(s string) wait {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return wait{}
	}
	if n > int64(maxPaceHold/time.Second) {
		n = int64(maxPaceHold / time.Second)
	}
	return wait{d: time.Duration(n) * time.Second, ok: true}
}
