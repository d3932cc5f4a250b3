package client

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/remedy-go/remedy/internal/waits"
)

// Pacing: what a server says of its rate limit paces every call to its origin, through the
// Loop's Pacer. Before each attempt the loop asks the pacer leave to send (pace), and waits for
// the time it names, within the call's budgets, or stops at once with RetryLater, sending
// nothing; after each attempt it tells the pacer what the answer said (paceLearn).

// paceLearn tells the pacer what the answer to an attempt said of the server's rate limit: a
// refusal that states its wait (a 429 or 503 with Retry-After, Retry-After-Ms, a body's
// retry_after_ms, a RetryInfo; a rate-limit failure with a reset), RateLimit fields of any
// answer that say nothing remains until a reset, and how many requests they say remain. at
// is when the answer came; resp is nil when there was none.
func (r *run) paceLearn(ctx context.Context, c *Call, resp *Response, at time.Time) {
	var l Limit
	if resp != nil {
		l = limitOf(resp, at)
	}
	if err := r.loop.Pacer.Learn(ctx, c.paceKey(), l); err != nil {
		r.paceFailed(ctx, c, "learn", err)
	}
	// An answer that names the limit it counted against, another than the call was paced
	// under (the operation's first call, or its limit changed), says it of that limit too: the
	// operation's next calls are paced under it.
	if resp == nil || l == (Limit{}) {
		return
	}
	if s := scopeOf(resp.Header); s != "" && s != c.scope {
		scoped := Call{Origin: c.Origin, scope: s}
		if err := r.loop.Pacer.Learn(ctx, scoped.paceKey(), l); err != nil {
			r.paceFailed(ctx, c, "learn", err)
		}
	}
}

// limitOf is what an answer, come at at, said of its server's rate limit.
func limitOf(resp *Response, at time.Time) Limit {
	var d time.Duration
	if env := resp.Envelope; env != nil && env.RetryAfter > 0 && rateLimited(env) {
		d = env.RetryAfter
	}
	fields := rateFields(resp.Header)
	if w := exhausted(fields); w.OK && w.D > d {
		d = w.D
	}
	var l Limit
	if d > 0 {
		l.Until = at.Add(min(d, maxPaceHold))
	}
	if b, ok := budget(fields); ok {
		l.Remaining, l.Reset = int(min(b.remaining, math.MaxInt32)), at.Add(b.reset.D)
		if b.quota > 0 && b.window > 0 {
			l.Quota, l.Window = int(min(b.quota, math.MaxInt32)), b.window
		}
	}
	return l
}

// maxPaceHold bounds what one answer can hold an origin for: a Retry-After of years parks no
// client (the loop refuses waits past Limits.MaxWait anyway, and says when to come back).
const maxPaceHold = 24 * time.Hour

// rateLimited reports whether a failure is a refusal that says when to come back: a 429, a
// 503, or a failure whose category is rate_limit.
func rateLimited(e *remedy.Envelope) bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable || e.Category == remedy.CategoryRateLimit
}

// spared reports whether a refusal is not counted against Limits.MaxAttempts: a 429 or a
// rate_limit failure that states its wait, while fewer than MaxAttempts were spared in
// the call. (A 503 is counted: it may be an outage, which MaxAttempts bounds.)
func spared(e *remedy.Envelope, s *State, lim Limits) bool {
	return e != nil && e.RetryAfter > 0 && (e.Status == http.StatusTooManyRequests || e.Category == remedy.CategoryRateLimit) &&
		s.Throttled < lim.MaxAttempts
}

// pace asks the pacer, before an attempt of c, leave to send it, and waits for the time the
// pacer names until it gives leave: a refusal another call got meanwhile may have moved it
// later. It returns how long it waited, and whether the pacer counted the attempt (then
// paceLearn must follow it); or, when a wait would end past Limits.MaxWait, the call's
// elapsed budget or the context's deadline, the call's error, with nothing sent.
func (r *run) pace(ctx context.Context, c *Call, lim Limits) (time.Duration, bool, *CallError) {
	p := r.loop.Pacer
	if p == nil || c.Origin == "" {
		return 0, false, nil
	}
	var waited time.Duration
	for asked := 1; ; asked++ {
		until, err := p.Take(ctx, c.paceKey())
		if err != nil {
			r.paceFailed(ctx, c, "take", err)
			return waited, false, nil
		}
		d := time.Until(until)
		if until.IsZero() {
			return waited, true, nil
		}
		if d <= 0 {
			if asked < 3 {
				continue // the time named came while the pacer answered: ask again
			}
			return waited, false, nil // a pacer that names only times passed holds nothing
		}
		var cause error
		var why string
		name := c.paceName()
		switch {
		case d > lim.MaxWait:
			cause, why = ErrWaitTooLong, "the server's stated wait for "+name+" is longer than the longest wait"
		case d > lim.MaxElapsed-time.Since(r.start):
			cause, why = ErrElapsedBudget, "the server's stated wait for "+name+" would end after the call's elapsed budget"
		case deadlineBefore(ctx, until):
			cause, why = ErrDeadline, "the server's stated wait for "+name+" would end after the context's deadline"
		}
		if cause != nil {
			e := r.fail(*c, cause, why+"; nothing was sent", nil, &RetryLater{After: d, At: until})
			e.Asked = d
			e.Detail += " (the server asked to wait " + d.String() + ")"
			return waited, false, e
		}
		if !sleep(ctx, d) {
			return waited, false, r.fail(*c, ErrDeadline, "the context ended during the wait the server stated for "+c.paceName(), nil, ctx.Err())
		}
		waited += d
	}
}

// paceKey is the key c is paced under: its origin, and the rate limit its server said it
// counts against, when it named one ("https://api.github.com search").
func (c *Call) paceKey() string {
	if c.scope == "" {
		return c.Origin
	}
	return c.Origin + " " + c.scope
}

// paceName names what c is paced under, for a person: "https://api.github.com (its search
// limit)".
func (c *Call) paceName() string {
	if c.scope == "" {
		return c.Origin
	}
	return c.Origin + " (its " + c.scope + " limit)"
}

// maxScope bounds the name of a rate limit read from an answer.
const maxScope = 64

// scopeOf is the rate limit an answer says its request counted against, when it names one:
// GitHub's X-RateLimit-Resource (core, search, graphql, …), whose limits are counted apart.
// A name that is long or not printable ASCII is none.
func scopeOf(h http.Header) string {
	v := httpop.Header(h, "X-Ratelimit-Resource")
	if v == "" || len(v) > maxScope {
		return ""
	}
	for i := range len(v) {
		if c := v[i]; c <= ' ' || c > '~' {
			return ""
		}
	}
	return v
}

// paceFailed logs a pacer that failed: the call goes as it would without one.
func (r *run) paceFailed(ctx context.Context, c *Call, what string, err error) {
	if lg := r.loop.Logger; lg != nil {
		lg.DebugContext(ctx, "remedy pacer failed; the call is not paced", "operation", c.Operation, "origin", c.Origin, "step", what, "error", err.Error())
	}
}

// rateField is one limit an answer's RateLimit fields state: how many units remain of it
// until its reset, and whether the units are requests (or tokens, bytes: a count a request
// does not spend one of).
type rateField struct {
	remaining int64
	reset     waits.Wait
	requests  bool
	// quota units are admitted per window, when the server states both (RateLimit-Policy).
	quota  int64
	window time.Duration
}

// rateFields reads the RateLimit fields of any answer, a success's too: the IETF fields,
// current (RateLimit: "policy";r=10;t=30, with RateLimit-Policy's qu naming a unit other than
// requests) and older (RateLimit: limit=10, remaining=0, reset=30, and RateLimit-Remaining
// with RateLimit-Reset); X-RateLimit-Remaining with X-RateLimit-Reset (seconds, or an epoch
// as GitHub sends it); OpenAI's x-ratelimit-remaining-requests and -tokens with their resets
// ("6m0s"); Anthropic's anthropic-ratelimit-*-remaining with theirs (RFC 3339). A field
// without a reset it can be read with is left out.
func rateFields(h http.Header) []rateField {
	if !statesLimit(h) {
		return nil
	}
	fields := rateLimitField(h["Ratelimit"], policies(h["Ratelimit-Policy"]))
	for _, name := range [...]string{"Ratelimit-Remaining", "X-Ratelimit-Remaining", "X-Rate-Limit-Remaining"} {
		if n, ok := count(httpop.Header(h, name)); ok {
			if w := resetOf(h); w.OK {
				fields = append(fields, rateField{remaining: n, reset: w, requests: true})
			}
			break
		}
	}
	for i, kind := range [...][2]string{
		{"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
		{"X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
	} {
		n, ok := count(httpop.Header(h, kind[0]))
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(strings.TrimSpace(httpop.Header(h, kind[1]))); err == nil && d >= 0 {
			fields = append(fields, rateField{remaining: n, reset: waits.Wait{D: d, OK: true}, requests: i == 0})
		}
	}
	for i, kind := range [...][2]string{
		{"Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
		{"Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
		{"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"},
		{"Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset"},
	} {
		n, ok := count(httpop.Header(h, kind[0]))
		if !ok {
			continue
		}
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(httpop.Header(h, kind[1]))); err == nil {
			fields = append(fields, rateField{remaining: n, reset: untilOf(h, t), requests: i == 0})
		}
	}
	// However far ahead a server puts a reset (an epoch or an instant years away), no count
	// or hold outlives maxPaceHold: the loop refuses such a wait at once anyway.
	for i := range fields {
		fields[i].reset.D = min(fields[i].reset.D, maxPaceHold)
	}
	return fields
}

// statesLimit reports whether h holds a header rateFields reads: one pass over the header's
// names, so that an answer without any (most answers) costs no lookup of each. The names
// rateFields reads are canonical (net/http stores every header so), and they start so.
func statesLimit(h http.Header) bool {
	for k := range h {
		switch {
		case len(k) < len("Ratelimit"):
		case strings.HasPrefix(k, "Ratelimit"), strings.HasPrefix(k, "X-Ratelimit-"),
			strings.HasPrefix(k, "X-Rate-Limit-"), strings.HasPrefix(k, "Anthropic-Ratelimit-"):
			return true
		}
	}
	return false
}

// exhausted is the wait until the latest reset of the limits an answer says nothing remains
// of that count no requests (tokens, bytes): a limit of requests is the count's (budget).
func exhausted(fields []rateField) waits.Wait {
	var best waits.Wait
	for _, f := range fields {
		if f.remaining == 0 && !f.requests {
			best = later(best, f.reset)
		}
	}
	return best
}

// budget is the limit counting requests that an answer says has fewest left (of two with as
// few, the one with the later reset): what may still be sent until its reset, none when
// nothing remains. ok is false when the answer states none.
func budget(fields []rateField) (best rateField, ok bool) {
	for _, f := range fields {
		if !f.requests || f.reset.D <= 0 {
			continue
		}
		if !ok || f.remaining < best.remaining || f.remaining == best.remaining && f.reset.D > best.reset.D {
			best, ok = f, true
		}
	}
	return best, ok
}

// count reads a count of what remains: a non-negative integer.
func count(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}

// resetOf reads h's reset header as the parser does, measured from its Date.
func resetOf(h http.Header) waits.Wait { return waits.Reset(h, httpop.Header(h, "Date")) }

// untilOf is the wait until t, measured from h's Date as the parser measures it.
func untilOf(h http.Header, t time.Time) waits.Wait { return waits.Until(t, httpop.Header(h, "Date")) }

// later is the longer of two waits.
func later(a, b waits.Wait) waits.Wait {
	if b.OK && (!a.OK || b.D > a.D) {
		return b
	}
	return a
}

// rateLimitField reads the IETF RateLimit field: the current draft's list of policies,
// `"name";r=<remaining>;t=<seconds to reset>`, and the older dictionary, `limit=10,
// remaining=0, reset=30`. policies are RateLimit-Policy's, by name.
func rateLimitField(values []string, policies map[string]policy) []rateField {
	var fields []rateField
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
			n, ok := count(r)
			w := deltaSeconds(t)
			if ok && w.OK {
				p := policies[strings.TrimSpace(params[0])]
				fields = append(fields, rateField{remaining: n, reset: w, requests: !p.units, quota: p.quota, window: p.window})
			}
		}
		n, ok := count(dict.remaining)
		if w := deltaSeconds(dict.reset); ok && w.OK {
			fields = append(fields, rateField{remaining: n, reset: w, requests: true})
		}
	}
	return fields
}

// policy is one policy of RateLimit-Policy: its quota per window, and whether its unit is not
// requests.
type policy struct {
	quota  int64
	window time.Duration
	units  bool
}

// policies reads RateLimit-Policy (`"name";q=100;w=60;qu="content-bytes"`), by name.
func policies(values []string) map[string]policy {
	var out map[string]policy
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			params := strings.Split(strings.TrimSpace(item), ";")
			var p policy
			for _, param := range params[1:] {
				k, val, _ := strings.Cut(strings.TrimSpace(param), "=")
				switch k {
				case "q":
					if q, ok := count(val); ok { // a negative quota is no quota
						p.quota = q
					}
				case "w":
					if w := deltaSeconds(val); w.OK {
						p.window = w.D
					}
				case "qu":
					p.units = strings.Trim(val, `"`) != "requests"
				}
			}
			if out == nil {
				out = map[string]policy{}
			}
			out[strings.TrimSpace(params[0])] = p
		}
	}
	return out
}

// deltaSeconds reads a non-negative integer number of seconds.
func deltaSeconds(s string) waits.Wait {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return waits.Wait{}
	}
	if n > int64(maxPaceHold/time.Second) {
		n = int64(maxPaceHold / time.Second)
	}
	return waits.Wait{D: time.Duration(n) * time.Second, OK: true}
}
