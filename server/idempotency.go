package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/canon"
)

// idempotency makes an operation registered with Idempotent execute once per key: the first
// request with a key claims it, runs the rest of the pipeline and stores its success; a retry
// gets that success replayed; a duplicate arriving meanwhile waits for it. Failures release
// the key, so that a retry really retries; a success whose result could not be stored keeps
// the key claimed until its lease ends, so that it never executes twice.
func idempotency(next handler) handler {
	return func(x *exchange) error {
		if x.op.Idempotency == IdempotencyOff {
			return next(x)
		}
		key, present, why := idempotencyKey(x.r.Header.Values(remedy.HeaderIdempotencyKey))
		switch {
		case why != "":
			return x.invalidKey(why)
		case !present && x.op.Idempotency == IdempotencyRequired:
			return Error(CodeIdempotencyKeyRequired, x.op.ID+" requires "+x.keyAt()+": mint one unique value per logical call and reuse it for its retries")
		case !present:
			return next(x)
		}
		return x.once(x.storeScope(), x.scoped(key), next)
	}
}

// once runs the rest of the pipeline under the claim of storeKey, or answers from the request
// that holds it.
func (x *exchange) once(scope, storeKey string, next handler) error {
	cfg := &x.api.idem
	fp := x.fingerprint()
	owner := newToken()
	var deadline time.Time
	if cfg.Wait > 0 {
		deadline = time.Now().Add(cfg.Wait)
	}
	pause := 5 * time.Millisecond
	for {
		rec, claimed, err := cfg.Store.Claim(x.ctx, scope, storeKey, fp, owner, cfg.Lease)
		switch {
		case err != nil:
			return x.storeFailure("claiming an idempotency key", err)
		case claimed:
			return x.execute(scope, storeKey, owner, next)
		case subtle.ConstantTimeCompare(rec.Fingerprint, fp) != 1:
			return Error(CodeIdempotencyKeyReused, "this Idempotency-Key was used for "+x.op.ID+" with another payload; mint a new key for a new payload")
		case rec.Completed && x.op.Async && x.tool:
			return x.replayJob(scope, rec.Result)
		case rec.Completed:
			x.replay(rec.Result)
			return nil
		}
		// In flight: wait for it, within the bound, and look again.
		if deadline.IsZero() || time.Until(deadline) < pause {
			p := Error(CodeIdempotencyInFlight, "a request with this Idempotency-Key is still running; send the identical call again after the wait to get its result")
			p.RetryAfter = time.Second
			return p
		}
		t := time.NewTimer(pause)
		select {
		case <-x.ctx.Done():
			// The caller is gone; nothing it could read, and nothing to log as a failure.
			t.Stop()
			return Error(CodeUnavailable, "the request was cancelled while a request with its Idempotency-Key ran")
		case <-t.C:
		}
		pause = min(pause*2, 200*time.Millisecond)
	}
}

// How a success's result is stored: up to completeAttempts calls of Complete, the first
// completePause apart and each pause four times the last, all within completeBudget.
const (
	completeAttempts = 3
	completePause    = 10 * time.Millisecond
	completeBudget   = 5 * time.Second
)

// execute runs the rest of the pipeline under the claim. A failure or a panic (of a stage or
// of the handler) releases the key, so that a retry really retries — except once an Async
// operation's job is stored: the key then holds its submission whatever the call answers, so
// that a failure of the job within an MCP call's wait is replayed, not run again. A success is
// stored; when the store will not take it, the claim is kept, never released: the key then
// stays in flight until its lease ends, and a retry meanwhile waits or is answered 409
// idempotency_in_flight, instead of executing a second time.
func (x *exchange) execute(scope, storeKey, owner string, next handler) error {
	cfg := &x.api.idem
	x.capture = &StoredResponse{}
	succeeded := false
	defer func() {
		switch {
		case succeeded:
			return
		case x.submitted != nil:
			// A panic after the job was stored: the key holds the job all the same.
			x.complete(scope, storeKey, owner, *x.submitted)
			return
		}
		// The request may be gone; the key must be released all the same.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(x.ctx), completeBudget)
		defer cancel()
		if rerr := cfg.Store.Release(ctx, scope, storeKey, owner); rerr != nil && !errors.Is(rerr, ErrNotOwner) {
			x.logStore("releasing an idempotency key", rerr)
		}
	}()
	err := next(x)
	res := *x.capture
	switch {
	case x.submitted != nil:
		res = *x.submitted
	case err != nil:
		return err
	}
	succeeded = true
	if res.Status < 200 || res.Status > 299 {
		return err // nothing to replay: the claim runs out with its lease
	}
	x.complete(scope, storeKey, owner, res)
	return err
}

// complete stores the result of owner's execution under storeKey, trying again, briefly,
// when the store fails. The caller has its response already: a failure is only logged.
func (x *exchange) complete(scope, storeKey, owner string, res StoredResponse) {
	cfg := &x.api.idem
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.ctx), completeBudget)
	defer cancel()
	pause := completePause
	for attempt := 1; ; attempt++ {
		err := cfg.Store.Complete(ctx, scope, storeKey, owner, res, cfg.Retention)
		switch {
		case err == nil:
			return
		case errors.Is(err, ErrNotOwner):
			// The lease ran out while the handler ran, and another request took the key.
			x.api.logger.LogAttrs(x.ctx, slog.LevelWarn, "remedy: an idempotent request outlived its lease; its result was not stored",
				slog.String("operation", x.op.ID), slog.String("trace_id", x.trace()), slog.Duration("lease", cfg.Lease))
			return
		case attempt == completeAttempts:
			x.logStore(fmt.Sprintf("storing an idempotent result (%d attempts; the key stays claimed until its lease ends)", attempt), err)
			return
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			x.logStore(fmt.Sprintf("storing an idempotent result (%d attempts, out of time; the key stays claimed until its lease ends)", attempt), err)
			return
		case <-t.C:
		}
		pause *= 4
	}
}

// replayedHeaders are the headers stored with a result and replayed with it: those that
// describe the response, not the connection or the moment — and, for a 202 of an Async
// operation, where its status is and how soon to ask (a replayed wait is never too short:
// the job only got further along).
var replayedHeaders = []string{"Content-Type", "Content-Location", "Location", "Etag", "Last-Modified", "Link",
	"Operation-Location", "Retry-After", "Retry-After-Ms"}

// record keeps what writeJSON sends, when the exchange is capturing it.
func (x *exchange) record(status int, body []byte) {
	x.obs.status = status
	if x.capture == nil {
		return
	}
	h := make(http.Header, 1)
	for _, k := range replayedHeaders {
		if v := x.w.Header().Values(k); len(v) > 0 {
			h[k] = v
		}
	}
	*x.capture = StoredResponse{Status: status, Header: h, Body: body}
}

// replay sends a stored result.
func (x *exchange) replay(res StoredResponse) {
	h := x.w.Header()
	for k, v := range res.Header {
		h[k] = slices.Clone(v) // the store's own; the response may add to it
	}
	h.Set(remedy.HeaderReplayed, "true")
	x.wrote = true
	x.obs.status, x.obs.replayed = res.Status, true
	x.w.WriteHeader(res.Status)
	x.w.Write(res.Body)
}

// scoped is the store key of an idempotency key: hashed with the principal and the operation,
// so that callers cannot reach each other's results and the store holds no caller's text.
func (x *exchange) scoped(key string) string {
	return "idem:" + base64.RawURLEncoding.EncodeToString(hashParts(string(x.principal), x.op.ID, key))
}

// hashParts is the SHA-256 of parts, each prefixed by its length, so that no two lists of
// parts hash alike by moving text from one part to the next.
func hashParts(parts ...string) []byte {
	h := sha256.New()
	for _, part := range parts {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	return h.Sum(nil)
}

// fingerprint identifies the payload as sent: method, path, query (its parameters in order of
// name) and the body, in exact canonical JSON when it is JSON (canon.Fingerprint: RFC 8785 but
// with numbers by their exact decimal value), so that key order, whitespace and the spelling
// of a value do not matter and any changed value does, even one a double cannot hold (an int64
// beyond 2^53 binds every digit); and byte for byte when it is not JSON.
func (x *exchange) fingerprint() []byte {
	if x.fp != nil {
		return x.fp
	}
	query := x.r.URL.RawQuery
	if q, err := url.ParseQuery(query); err == nil {
		query = q.Encode()
	}
	var body [sha256.Size]byte
	if len(x.body) > 0 {
		var err error
		if body, err = canon.Fingerprint(x.body); err != nil {
			body = sha256.Sum256(append([]byte("raw\x00"), x.body...))
		}
	}
	x.fp = hashParts(x.r.Method, x.r.URL.EscapedPath(), query, string(body[:]))
	return x.fp
}

// idempotencyKey reads the Idempotency-Key header: one value, bare or an RFC 8941 string, of
// 1 to 255 printable ASCII characters. present is false when there is none; why says what is
// wrong with one that is not a key.
func idempotencyKey(values []string) (key string, present bool, why string) {
	if len(values) == 0 {
		return "", false, ""
	}
	if len(values) > 1 {
		return "", true, "is sent more than once"
	}
	v := trimOWS(values[0])
	if len(v) > 0 && v[0] == '"' {
		s, ok := sfString(v)
		if !ok {
			return "", true, "is not a valid quoted string (RFC 8941)"
		}
		v = s
	} else {
		for i := 0; i < len(v); i++ {
			if v[i] <= ' ' || v[i] > '~' {
				return "", true, "holds a character outside printable ASCII" + quoteAdvice
			}
		}
	}
	switch {
	case v == "":
		return "", true, "is empty"
	case len(v) > 255:
		return "", true, "is longer than 255 characters"
	}
	return v, true, ""
}

// quoteAdvice ends what is said of a header key holding a space: it may be quoted.
const quoteAdvice = " (quote a key with spaces)"

// invalidKey is the answer to a key that is not one, in the words of the surface it came by:
// the Idempotency-Key header over REST, the idempotencyKey argument of a tool (whose issue
// points at it, and where quoting is the server's business, not the caller's).
func (x *exchange) invalidKey(why string) *Problem {
	if !x.tool {
		return Error(CodeIdempotencyKeyInvalid, "the "+remedy.HeaderIdempotencyKey+" header "+why)
	}
	why = strings.TrimSuffix(why, quoteAdvice)
	msg := "the " + remedy.ArgIdempotencyKey + " argument " + why
	return Error(CodeIdempotencyKeyInvalid, msg).with(remedy.Issue{
		Path: "/" + remedy.ArgIdempotencyKey, Code: "invalid", Message: msg})
}

func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// sfString decodes an RFC 8941 string: printable ASCII in double quotes, with \" and \\ the
// only escapes.
func sfString(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	b := make([]byte, 0, len(s)-2)
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
			if i >= len(s)-1 || (s[i] != '"' && s[i] != '\\') {
				return "", false
			}
			b = append(b, s[i])
		case c == '"' || c < ' ' || c > '~':
			return "", false
		default:
			b = append(b, c)
		}
	}
	return string(b), true
}

// newToken is 128 random bits, in base64url.
func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// storeFullWait is the Retry-After of a request refused because the store is full.
const storeFullWait = 10 * time.Second

// storeFailure answers a store that could not be reached, or that is full: 503 unavailable,
// retryable after Retry-After, and the cause logged, never sent.
func (x *exchange) storeFailure(what string, err error) error {
	if x.ctx.Err() != nil { // the caller is gone: no store failure to report
		return Error(CodeUnavailable, "the request was cancelled")
	}
	if errors.Is(err, ErrStoreFull) {
		// A quota doing its work: a warning for the operator, not an outage.
		x.api.logger.LogAttrs(x.ctx, slog.LevelWarn, "remedy: "+what+": the store is full", slog.String("error", err.Error()),
			slog.String("operation", x.op.ID), slog.String("trace_id", x.trace()))
		p := Error(CodeUnavailable, "the service holds as many pending confirmations and idempotent requests of this caller as it may; nothing was done")
		p.RetryAfter = storeFullWait
		return p
	}
	x.logStore(what, err)
	p := Error(CodeUnavailable, "the service cannot guarantee this operation runs once right now; nothing was done")
	p.RetryAfter = time.Second
	return p
}

func (x *exchange) logStore(what string, err error) {
	x.api.logger.LogAttrs(x.ctx, slog.LevelError, "remedy: "+what, slog.String("error", err.Error()),
		slog.String("operation", x.op.ID), slog.String("trace_id", x.trace()))
}
