package remedy

import (
	"math"
	"strings"
	"time"

	"github.com/remedy-go/remedy/internal/codename"
	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/remedy-go/remedy/internal/tape"
	"github.com/remedy-go/remedy/internal/waits"
)

// wait is a server-supplied wait and whether one was given at all.
type wait = waits.Wait

// retryFacts are what the dialect readers found in the body about retrying. The rules that turn
// them, the headers and the status into a decision are all in resolveRetry.
type retryFacts struct {
	flag    int8 // explicit body flag: +1 retryable, -1 not, 0 unsaid
	bodyMs  wait // retry_after_ms
	bodySec wait // retry_after_seconds
	google  wait // google.rpc.RetryInfo.retryDelay
	k8s     wait // Kubernetes details.retryAfterSeconds
}

// resolveRetry decides Retryable and RetryAfter. The rules, in one place:
//
// Retryable — the first that speaks decides:
//  1. an explicit flag in the body: retryable, is_retriable (and Google's RetryInfo, whose
//     presence means "retry after this delay");
//  2. a header: X-Should-Retry, Stripe-Should-Retry; a 403 with X-RateLimit-Remaining: 0
//     (GitHub's primary rate limit) is retryable;
//  3. the status's default: 408, 425, 429, 500, 502, 503, 504 (and the de-facto transient
//     520–524 and 529) are retryable, every other status is not; a well-known code refines it
//     (a 409 is retryable only when its code names a transient conflict such as
//     confirmation_required or idempotency_in_flight, a 400 ThrottlingException is, a 429
//     insufficient_quota is not). An in-band failure (no HTTP failure status) is retryable only
//     when its code is a well-known transient one, else nothing decided (RetryFromNone).
//
// Whichever spoke, its word is read in remedy's one meaning of Retryable — the same request
// can succeed later: a failure that names a fix in the arguments (namesFix: issues or an
// example request in a validation failure, fields or their values elsewhere) is not
// retryable, whatever the body, a header or the status said, since sent again unchanged it
// fails the same way. AgentBack's retryable: true on a validation failure means "can succeed
// with corrected input", which is this reading: the correction is the Rewriter's (Decide,
// rule 9). RetrySource still names the rule that spoke (a body that said true is
// RetryFromBody with Retryable false), so that "did the server say?" keeps its answer. So is
// a code that waits on the caller, not on time — payment, an idempotency key, the user's
// confirmation (a challenge, a spent token) — whatever said retryable.
//
// RetryAfter — the first present and valid source, in order: retry_after_ms, Retry-After-Ms,
// retry_after_seconds, Google RetryInfo, Kubernetes retryAfterSeconds, Retry-After
// (delta-seconds or HTTP-date, relative to the Date header when present), and for rate-limit
// failures the reset headers (RateLimit-Reset, X-RateLimit-Reset, OpenAI's
// x-ratelimit-reset-*, Anthropic's anthropic-ratelimit-*-reset). Negative, NaN and non-numeric
// values are ignored, never guessed; enormous ones saturate at the largest Duration.
func (p *parser) resolveRetry(info codeInfo) {
	e := &p.e
	switch header := p.headerFlag(); {
	case p.facts.flag != 0:
		e.Retryable, e.RetrySource = p.facts.flag > 0, RetryFromBody
	case header != 0:
		e.Retryable, e.RetrySource = header > 0, RetryFromHeader
	case e.Status >= 400:
		e.Retryable, e.RetrySource = RetryableStatus(e.Status), RetryFromStatus
		if info.transient != 0 {
			e.Retryable = info.transient > 0
		}
	case info.transient > 0:
		e.Retryable, e.RetrySource = true, RetryFromStatus
	default:
		e.Retryable, e.RetrySource = false, RetryFromNone
	}
	if e.Retryable && (info.transient == waitsOnCaller || p.namesFix()) {
		e.Retryable = false
	}

	for _, w := range [...]wait{p.facts.bodyMs, p.headerMs(), p.facts.bodySec, p.facts.google, p.facts.k8s} {
		if w.OK {
			e.RetryAfter = w.D
			return
		}
	}
	if w := p.retryAfterHeader(); w.OK {
		e.RetryAfter = w.D
		return
	}
	if e.Status == 429 || e.Category == CategoryRateLimit {
		if w := p.rateLimitReset(); w.OK {
			e.RetryAfter = w.D
		}
	}
}

// NamesFix reports whether the failure says what to change in the arguments: issues or an
// example request in a validation failure or an uncategorized one; or, in a state or internal
// failure that only its status or a code nothing knows categorizes, issues that name a field
// or the values it takes. A not-found failure names a fix only with the values the server
// offers in its place. It is the one test of "names fields": resolveRetry reads such a
// failure as not retryable (so Parse, Classify and everything built on them agree), and
// Decide hands it to the Rewriter (rule 9).
func (e *Envelope) NamesFix() bool { return namesFix(e) }

func namesFix(e *Envelope) bool {
	if len(e.Issues) == 0 && len(e.ExampleRequest) == 0 {
		return false
	}
	switch fixNeedOf(e) {
	case fixAny:
		return true
	case fixFields:
		return namesFields(e)
	case fixValues:
		return offersValues(e)
	}
	return false
}

// fixNeed is what a failure's issues must show for it to name a fix, given what its code and
// category say (namesFix); the classification path, which keeps no issues, decides by it
// whether what it knows of them is enough (parser.namesFix).
type fixNeed uint8

const (
	fixNever  fixNeed = iota // the code or the category says the arguments are not at fault
	fixAny                   // any issue, or an example request
	fixFields                // an issue that names a field or the values it takes
	fixValues                // an issue that offers values
)

func fixNeedOf(e *Envelope) fixNeed {
	var buf [64]byte
	if code, _ := codename.Norm(&buf, e.Code); strings.Contains(code, "notfound") || strings.HasPrefix(code, "nosuch") {
		// A resource that does not exist is looked up, not guessed: only the values the
		// server offers repair it.
		return fixValues
	}
	switch e.Category {
	case CategoryValidation, "":
		return fixAny
	case CategoryState, CategoryInternal:
		if info := lookupCode(e.Code); info.category != "" && e.Code != statusCode(e.Status) {
			return fixNever // a code that says what the failure is, and it is not the arguments
		}
		return fixFields
	}
	return fixNever
}

// namesFix is namesFix(&p.e) on either path. The classification path keeps no issues: it knows
// whether a reader passed over field-level facts (unread) and, where the reader could tell
// without keeping them, that the full parse keeps at least one (kept). When that does not
// settle it, the decision is left to the full parse (needFull).
func (p *parser) namesFix() bool {
	if p.full {
		return namesFix(&p.e)
	}
	if !p.unread {
		return false
	}
	switch fixNeedOf(&p.e) {
	case fixNever:
		return false
	case fixAny:
		if p.kept {
			return true
		}
	}
	p.needFull = true
	return false
}

// offersValues reports whether an issue offers values: a suggested one, or those allowed.
func offersValues(e *Envelope) bool {
	for i := range e.Issues {
		if len(e.Issues[i].SuggestedValue) > 0 || len(e.Issues[i].AllowedValues) > 0 {
			return true
		}
	}
	return false
}

// namesFields reports whether an issue names a field or the values it takes.
func namesFields(e *Envelope) bool {
	for i := range e.Issues {
		is := &e.Issues[i]
		if is.Path != "" || len(is.SuggestedValue) > 0 || len(is.AllowedValues) > 0 {
			return true
		}
	}
	return false
}

// RetryableStatus reports whether a failure with this status and nothing else said can succeed
// when sent again unchanged: a timeout, too early, too many requests, or a server or gateway
// failure (500, 502, 503, 504, 408, 425, 429, and the 52x statuses of Cloudflare and others).
func RetryableStatus(status int) bool {
	switch status {
	case 408, 425, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529:
		return true
	}
	return false
}

// headerFlag reads the retry headers: +1 retry, -1 do not, 0 unsaid.
func (p *parser) headerFlag() int8 {
	for _, v := range [...]string{p.h.shouldRetry, p.h.stripeShouldRetry} {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return 1
		case "false":
			return -1
		}
	}
	if p.rateLimitExhausted() {
		return 1
	}
	return 0
}

func (p *parser) headerMs() wait {
	v := p.h.retryAfterMs
	if v == "" {
		return wait{}
	}
	return waits.FromFloat(waits.ParseFloat(v), float64(time.Millisecond))
}

func (p *parser) retryAfterHeader() wait { return waits.RetryAfter(p.h.retryAfter, p.h.date) }

// until is the wait from the response's Date (or now) to t; a time already past is no wait.
func (p *parser) until(t time.Time) wait { return waits.Until(t, p.h.date) }

// rateLimitReset reads the reset headers rate-limited APIs send instead of Retry-After.
func (p *parser) rateLimitReset() wait {
	if w := p.resetHeader(); w.OK {
		return w
	}
	// OpenAI: durations such as "6m0s", "1s", "20ms"; the exhausted limit is the one to wait for.
	var best wait
	for _, kind := range [...][2]string{
		{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Remaining-Requests"},
		{"X-Ratelimit-Reset-Tokens", "X-Ratelimit-Remaining-Tokens"},
	} {
		v := httpop.Header(p.header, kind[0])
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if v == "" || err != nil || d < 0 {
			continue
		}
		if strings.TrimSpace(httpop.Header(p.header, kind[1])) == "0" {
			return wait{D: d, OK: true}
		}
		if !best.OK || d > best.D {
			best = wait{D: d, OK: true}
		}
	}
	if best.OK {
		return best
	}
	// Anthropic: RFC 3339 instants.
	for i, kind := range [...][2]string{
		{"Anthropic-Ratelimit-Requests-Reset", "Anthropic-Ratelimit-Requests-Remaining"},
		{"Anthropic-Ratelimit-Tokens-Reset", "Anthropic-Ratelimit-Tokens-Remaining"},
		{"Anthropic-Ratelimit-Input-Tokens-Reset", "Anthropic-Ratelimit-Input-Tokens-Remaining"},
		{"Anthropic-Ratelimit-Output-Tokens-Reset", "Anthropic-Ratelimit-Output-Tokens-Remaining"},
	} {
		v := httpop.Header(p.header, kind[0])
		if v == "" {
			continue
		}
		// The requests limit is what a 429 usually means; a token limit counts when exhausted.
		if i > 0 && strings.TrimSpace(httpop.Header(p.header, kind[1])) != "0" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(v)); err == nil {
			return p.until(t)
		}
	}
	return wait{}
}

// resetHeader reads RateLimit-Reset, X-RateLimit-Reset or X-Rate-Limit-Reset: seconds until
// the reset, or an epoch timestamp (GitHub).
func (p *parser) resetHeader() wait { return waits.Reset(p.header, p.h.date) }

// waitFromJSON reads a JSON number (or numeric string) of the given unit.
func waitFromJSON(v tape.Val, unit float64) wait {
	switch v.Kind() {
	case tape.Number:
		return waits.FromFloat(v.Num(), unit)
	case tape.String:
		return waits.FromFloat(waits.ParseFloat(v.Str()), unit)
	}
	return wait{}
}

// protoDuration reads a google.protobuf.Duration in its JSON mapping ("30s", "1.5s") or as an
// object {"seconds": 30, "nanos": 0}.
func protoDuration(v tape.Val) wait {
	if v.IsString() {
		s := strings.TrimSpace(v.Str())
		if !strings.HasSuffix(s, "s") {
			return wait{}
		}
		return waits.FromFloat(waits.ParseFloat(s[:len(s)-1]), float64(time.Second))
	}
	if v.IsObject() {
		sec, nanos := v.Member("seconds"), v.Member("nanos")
		if !sec.Exists() && !nanos.Exists() {
			return wait{}
		}
		s := waitFromJSON(sec, float64(time.Second))
		if sec.Exists() && !s.OK {
			return wait{}
		}
		n := waitFromJSON(nanos, 1)
		if nanos.Exists() && !n.OK {
			return wait{}
		}
		d := s.D + n.D
		if d < s.D {
			// seconds near the largest Duration plus nanos overflow: saturate, as every other
			// enormous wait does.
			d = time.Duration(math.MaxInt64)
		}
		return wait{D: d, OK: true}
	}
	return wait{}
}
