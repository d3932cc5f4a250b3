package remedyhuma

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/remedy-go/remedy/server"
)

// reqCtx is the huma.Context an operation's handler chain gets from the gate. It keeps the
// request as net/http describes it (for the Guard), notes a Retry-After a handler's error set,
// and, on a guarded operation, sends the response through the Guard's writer, reads the body
// the gate read already, and runs the confirmation gate when Huma asks for the handler's
// context — which it does once its validation and the input's resolvers have all passed, right
// before calling the handler.
type reqCtx struct {
	humaContext
	req        *http.Request
	retryAfter time.Duration

	// On a guarded operation only:
	w       http.ResponseWriter // the Guard's; nil: the adapter's own
	body    []byte
	read    bool // the body was read by the gate
	confirm func() error
	asked   bool
	began   bool // a response has begun: Huma is writing a failure, the handler will not run
}

// humaContext names the embedded huma.Context, whose method Context reqCtx overrides.
type humaContext = huma.Context

// stop carries the confirmation gate's refusal out of Huma's handler chain, from the call for
// the handler's context to the gate's middleware: Huma has no other way to refuse a call
// between its validation and its handler.
type stop struct{ err error }

// Context runs the confirmation gate at its first call before a response has begun, other
// than a resolver's: the call whose context Huma hands to the handler, once its validation and
// the input's resolvers have all passed. The handler is not called when the gate refuses. A
// resolver (an app's Resolve method, which Huma calls before it has decided whether the input
// is valid) may read the context too: its call does not run the gate, so that an input Huma
// refuses gets Huma's error and never a token. A call after a response has begun issues no
// token and lets nothing after it run.
func (c *reqCtx) Context() context.Context {
	if c.confirm != nil && !c.asked && !fromResolver() {
		c.asked = true
		if c.began {
			// A response began before the gate ran (Huma writing a refusal, or anything
			// else): no token is issued for it, and no handler runs after it.
			panic(stop{})
		}
		if err := c.confirm(); err != nil {
			panic(stop{err})
		}
	}
	return c.humaContext.Context()
}

// Where the runtime places a function: in Huma, in huma.Register's handler (the pipeline of
// validation, resolvers and handler Huma builds for an operation), in this add-on.
var (
	humaPkg      = reflect.TypeFor[huma.Operation]().PkgPath()
	humaRegister = humaPkg + ".Register["
	ownPkg       = reflect.TypeFor[reqCtx]().PkgPath()
)

// fromResolver reports whether the caller of reqCtx.Context is a resolver: the app's code that
// huma.Register's pipeline calls while it validates the input. Huma offers no hook between its
// validation and its handler, and it gives resolvers the same context it later reads for the
// handler, so the two calls are told apart by their callers: a resolver's passes through the
// app's code, then only through Huma's, huma.Register's among them, down to the gate. Any
// other call runs the gate — Huma's own, and one the gate cannot place (a middleware after the
// gate, a stack deeper than the one read) — so that a handler never runs unconfirmed. Were
// Huma to move its pipeline out of Register, a resolver's call would run the gate early (a
// challenge before validation), never the handler unconfirmed.
func fromResolver() bool {
	var pcs [64]uintptr
	n := runtime.Callers(3, pcs[:]) // from the caller of reqCtx.Context
	frames := runtime.CallersFrames(pcs[:n])
	app, register := false, false
	for {
		f, more := frames.Next()
		switch {
		case inPackage(f.Function, ownPkg):
			return app && register
		case strings.HasPrefix(f.Function, humaRegister):
			register = true
		case inPackage(f.Function, humaPkg):
		default:
			app, register = true, false
		}
		if !more {
			return false
		}
	}
}

// inPackage reports whether fn, a function's name as the runtime gives it, is in package pkg
// or a package under it.
func inPackage(fn, pkg string) bool {
	rest, ok := strings.CutPrefix(fn, pkg)
	return ok && rest != "" && (rest[0] == '.' || rest[0] == '/')
}

// Unwrap returns the adapter's context (humago.Unwrap and its peers follow it).
func (c *reqCtx) Unwrap() huma.Context { return c.humaContext }

func (c *reqCtx) BodyReader() io.Reader {
	if c.read {
		return bytes.NewReader(c.body)
	}
	return c.humaContext.BodyReader()
}

func (c *reqCtx) SetHeader(name, value string) {
	c.note(name, value)
	if c.w != nil {
		c.w.Header().Set(name, value)
		return
	}
	c.humaContext.SetHeader(name, value)
}

func (c *reqCtx) AppendHeader(name, value string) {
	c.note(name, value)
	if c.w != nil {
		c.w.Header().Add(name, value)
		return
	}
	c.humaContext.AppendHeader(name, value)
}

// note keeps a Retry-After in seconds a handler's error set (huma.ErrorWithHeaders), for the
// envelope's retry_after_ms.
func (c *reqCtx) note(name, value string) {
	if strings.EqualFold(name, "Retry-After") {
		if s, err := strconv.Atoi(strings.TrimSpace(value)); err == nil && s > 0 && s < 1<<20 {
			c.retryAfter = time.Duration(s) * time.Second
		}
	}
}

func (c *reqCtx) SetStatus(code int) {
	c.began = true
	if c.w != nil {
		c.w.WriteHeader(code)
		return
	}
	c.humaContext.SetStatus(code)
}

func (c *reqCtx) BodyWriter() io.Writer {
	c.began = true
	if c.w != nil {
		return c.w
	}
	return c.humaContext.BodyWriter()
}

// gate is the middleware Install puts last on every operation of the group.
func (in *installed) gate(ctx huma.Context, next func(huma.Context)) {
	rc := &reqCtx{humaContext: ctx, req: request(ctx)}
	op := ctx.Operation()
	p := in.policyOf(op)
	if !p.gated() {
		next(rc)
		return
	}
	w := &ctxWriter{ctx: ctx, h: http.Header{}}
	if hasBody(op) {
		body, err := readBody(ctx, op.MaxBodyBytes)
		if err != nil {
			in.fail(w, rc.req, err)
			return
		}
		rc.body, rc.read = body, true
		if op.MaxBodyBytes > 0 && int64(len(body)) >= op.MaxBodyBytes {
			// Huma refuses it (413); the Guard need not claim a key for it.
			next(rc)
			return
		}
	}
	principal := server.Anonymous
	if in.opts.Principal != nil {
		if s := in.opts.Principal(ctx); s != "" {
			principal = server.Principal(s)
		}
	}
	sop := &server.Operation{ID: op.OperationID, Method: op.Method, Path: op.Path, Summary: op.Summary,
		Confirm: p.confirm, Idempotency: p.idem}
	in.guard.Serve(w, rc.req, rc.body, sop, principal, func(gw http.ResponseWriter, confirm func() error) (err error) {
		rc.w = gw
		if p.confirm {
			rc.confirm = confirm
		}
		defer func() {
			if v := recover(); v != nil {
				s, ok := v.(stop)
				if !ok {
					panic(v)
				}
				err = s.err
			}
		}()
		next(rc)
		return nil
	})
}

// errTooLarge: a body over an operation without a limit of its own over this one.
var errTooLarge = server.Error(server.CodePayloadTooLarge, "the request body is larger than "+strconv.Itoa(server.DefaultMaxBody)+" bytes")

// readBody reads the body of a guarded request, whose fingerprint binds tokens and keys, up to
// Huma's limit for the operation (which Huma then enforces); an operation without a limit
// (MaxBodyBytes < 0) is held to server.DefaultMaxBody, since the whole body is kept.
func readBody(ctx huma.Context, limit int64) ([]byte, error) {
	r := ctx.BodyReader()
	if r == nil {
		return nil, nil
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	capped := limit <= 0
	if capped {
		limit = server.DefaultMaxBody + 1
	}
	b, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, server.Error(server.CodeInvalidJSON, "the request body could not be read to its end")
	}
	if capped && int64(len(b)) >= limit {
		return nil, errTooLarge
	}
	if len(b) == 0 {
		return nil, nil
	}
	return b, nil
}

// hasBody reports whether Huma reads a body for op.
func hasBody(op *huma.Operation) bool { return op.RequestBody != nil }

// request is the request of ctx as net/http describes it, for the Guard: method, URL,
// headers, and the adapter's own context (never the gate's, whose Context runs the gate).
func request(ctx huma.Context) *http.Request {
	u := ctx.URL()
	r := (&http.Request{Method: ctx.Method(), URL: &u, Header: http.Header{}, Host: ctx.Host(),
		RemoteAddr: ctx.RemoteAddr(), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}).WithContext(ctx.Context())
	ctx.EachHeader(func(name, value string) { r.Header.Add(name, value) })
	return r
}

// fail writes err as the Guard encodes it.
func (in *installed) fail(w http.ResponseWriter, r *http.Request, err error) {
	f := in.guard.Failure(r, err)
	for k, v := range f.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(f.Status)
	w.Write(f.Body)
}

// ctxWriter is an http.ResponseWriter over a huma.Context: the Guard writes through it.
type ctxWriter struct {
	ctx   huma.Context
	h     http.Header
	wrote bool
}

func (w *ctxWriter) Header() http.Header { return w.h }

func (w *ctxWriter) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	for k, vs := range w.h {
		for i, v := range vs {
			if i == 0 {
				w.ctx.SetHeader(k, v)
			} else {
				w.ctx.AppendHeader(k, v)
			}
		}
	}
	w.ctx.SetStatus(status)
}

func (w *ctxWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ctx.BodyWriter().Write(b)
}

// transform is the group's transformer: it writes an *Error as server's API writes a
// failure, for the request ctx holds.
func (in *installed) transform(ctx huma.Context, _ string, v any) (any, error) {
	e, ok := v.(*Error)
	if !ok || e.status < 400 {
		return v, nil
	}
	rc := gateCtx(ctx)
	var r *http.Request
	if rc != nil {
		r = rc.req
	} else {
		r = request(ctx)
	}
	f := in.guard.Failure(r, e.problem(rc, in.api.OpenAPI()))
	for k, vs := range f.Header {
		ctx.SetHeader(k, vs[0])
		for _, v := range vs[1:] {
			ctx.AppendHeader(k, v)
		}
	}
	return encoded(f.Body), nil
}

// gateCtx finds the gate's context under ctx, which later middleware may have wrapped.
func gateCtx(ctx huma.Context) *reqCtx {
	for range 16 {
		switch c := ctx.(type) {
		case *reqCtx:
			return c
		case interface{ Unwrap() huma.Context }:
			ctx = c.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// encoded is a failure's body, which Huma's JSON format writes as it is.
type encoded []byte

func (e encoded) MarshalJSON() ([]byte, error) { return json.RawMessage(e), nil }
