package remedyhuma

import (
	"errors"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/danielgtaylor/huma/v2"

	"github.com/remedy-go/remedy/server"
)

// Options configure Install. The zero value installs the contract with server's built-in codes
// and one in-memory store.
type Options struct {
	// Guard runs confirmation and idempotency and encodes failures (default: server.NewGuard()
	// — the built-in codes, one MemoryStore). Give server.NewGuard the options of a reference
	// server (WithRegistry for application codes, WithConfirmation and WithIdempotency for a
	// shared or Redis store, WithLogger) to share them with it.
	Guard *server.Guard
	// Principal says who makes a request: the scope of its idempotency keys and confirmation
	// tokens. It gets the request's context as Huma's adapter made it (values an
	// authentication middleware set are there). Default: every caller is server.Anonymous,
	// which suits an API with one caller only: two callers sharing a scope could replay each
	// other's results by reusing a key.
	Principal func(huma.Context) string
	// Confirm, Idempotent and RequireIdempotencyKey mark operations by their operationId, as
	// the functions of the same names mark an operation in its metadata: for an API whose
	// registrations stay as they are.
	Confirm, Idempotent, RequireIdempotencyKey []string
}

// installed is one API's contract: what its transformer, modifier and middleware share.
type installed struct {
	api   huma.API
	guard *server.Guard
	opts  Options
}

// current is the contract huma.NewError answers with when an error is made without a request:
// the last one installed. Huma's error constructor is one variable for the whole process, so
// all the Huma APIs of a process code their errors from one registry.
var current atomic.Pointer[installed]

// Install installs remedy's contract in api and returns the API to register operations on: a
// huma.Group over api (Huma's own wrapper, which adds transformers, operation modifiers and
// middleware) — operations registered on api itself, before or after, are left as they are.
// Call it once, before the operations are registered, and keep using the returned API where
// api was used:
//
//   - It sets huma.NewError and huma.NewErrorWithContext, the package variables Huma documents
//     as the way to replace its error model, to constructors of *Error; a transformer of the
//     group then writes each *Error as server's API would: the canonical envelope as
//     application/json, or RFC 9457 as application/problem+json when the request's Accept asks
//     for it. Being package variables, they apply to every Huma API of the process; an *Error
//     written by an API without the contract is still an envelope (see Error.MarshalJSON).
//   - It marks, through an operation modifier, the operations named in opts or in their
//     metadata (Confirm, Idempotent, RequireIdempotencyKey, Errors), adds to each operation's
//     OpenAPI description the extensions remedy's client and conformance kit read
//     (x-agent-error-codes, x-confirmation-required, x-ax-idempotent, x-ax-retryable,
//     x-idempotency-key), the Idempotency-Key and X-Confirmation-Token headers, and error
//     responses described by the envelope's schemas, and adds to the document the catalog of
//     codes (x-agent-errors).
//   - It adds to each marked operation, as its innermost middleware, the gate that runs
//     server's idempotency stage around Huma's validation and handler and server's
//     confirmation gate between the two (see Confirm).
//
// It returns an error for a nil api.
func Install(api huma.API, opts Options) (huma.API, error) {
	if api == nil {
		return nil, errors.New("remedyhuma: Install needs an API")
	}
	if opts.Guard == nil {
		g, err := server.NewGuard()
		if err != nil {
			return nil, err
		}
		opts.Guard = g
	}
	in := &installed{api: api, guard: opts.Guard, opts: opts}
	current.Store(in)
	huma.NewError = newError
	huma.NewErrorWithContext = func(_ huma.Context, status int, msg string, errs ...error) huma.StatusError {
		return newError(status, msg, errs...)
	}
	in.document()
	grp := huma.NewGroup(api)
	grp.UseModifier(in.modify)
	grp.UseTransformer(in.transform)
	byAPI.Store(huma.API(grp), in)
	return grp, nil
}

// The metadata keys of an operation's marks.
const (
	metaConfirm     = "remedy.confirm"     // bool
	metaIdempotency = "remedy.idempotency" // server.IdempotencyMode
	metaErrors      = "remedy.errors"      // []string: codes the handler returns
	metaGated       = "remedy.gated"       // bool: the gate is among the operation's middlewares
)

// Confirm marks op as destructive: a call without a token is answered 409
// confirmation_required with a single-use token bound to the principal, the operation and the
// payload (method, path, query, body in canonical JSON), and only the identical call with the
// token in X-Confirmation-Token runs — as server.Confirm() does on a reference server. The
// challenge is issued after Huma has validated the input and run its resolvers (the gate runs
// where Huma hands the handler its context; a resolver reading the context does not run it),
// so an invalid call gets its validation error, never a token.
func Confirm(op huma.Operation) huma.Operation { return mark(op, metaConfirm, true) }

// Idempotent marks op as replaying its results: a call with an Idempotency-Key runs once per
// principal, operation and key, its retries get the stored 2xx with Idempotency-Replayed: true,
// the same key with another payload is refused 422 idempotency_key_reused, and failures are
// never stored — as server.Idempotent() does on a reference server.
func Idempotent(op huma.Operation) huma.Operation {
	return mark(op, metaIdempotency, server.IdempotencyOptional)
}

// RequireIdempotencyKey marks op as Idempotent, and refuses a call without a key with 400
// idempotency_key_required.
func RequireIdempotencyKey(op huma.Operation) huma.Operation {
	return mark(op, metaIdempotency, server.IdempotencyRequired)
}

// Errors declares the codes of the registry that op's handler returns (as *server.Problem, or
// by the statuses of Huma's errors), so that they are listed in the operation's
// x-agent-error-codes. Huma's own op.Errors statuses are listed too, by their codes.
func Errors(op huma.Operation, codes ...string) huma.Operation {
	prev, _ := op.Metadata[metaErrors].([]string)
	return mark(op, metaErrors, append(slices.Clone(prev), codes...))
}

func mark(op huma.Operation, key string, v any) huma.Operation {
	m := make(map[string]any, len(op.Metadata)+1)
	maps.Copy(m, op.Metadata)
	m[key] = v
	op.Metadata = m
	return op
}

// policy is what the contract enforces for one operation.
type policy struct {
	confirm bool
	idem    server.IdempotencyMode
	codes   []string
}

func (p policy) gated() bool { return p.confirm || p.idem != server.IdempotencyOff }

// policyOf reads op's marks: its metadata, and the lists of Options by operationId.
func (in *installed) policyOf(op *huma.Operation) policy {
	var p policy
	p.confirm, _ = op.Metadata[metaConfirm].(bool)
	p.idem, _ = op.Metadata[metaIdempotency].(server.IdempotencyMode)
	p.codes, _ = op.Metadata[metaErrors].([]string)
	if slices.Contains(in.opts.Confirm, op.OperationID) {
		p.confirm = true
	}
	if slices.Contains(in.opts.RequireIdempotencyKey, op.OperationID) {
		p.idem = server.IdempotencyRequired
	} else if p.idem == server.IdempotencyOff && slices.Contains(in.opts.Idempotent, op.OperationID) {
		p.idem = server.IdempotencyOptional
	}
	return p
}

// modify is the group's operation modifier: it documents op's contract and puts the gate
// last among its middlewares. Huma runs modifiers twice for one registration (to document the
// operation, then to serve it) on the same operation: the second run finds it done.
func (in *installed) modify(op *huma.Operation, next func(*huma.Operation)) {
	if gated, _ := op.Metadata[metaGated].(bool); !gated {
		p := in.policyOf(op)
		m := make(map[string]any, len(op.Metadata)+2)
		maps.Copy(m, op.Metadata)
		m[metaGated] = true
		m[metaConfirm] = p.confirm
		m[metaIdempotency] = p.idem
		op.Metadata = m
		in.describe(op, p)
		// Last, so that no middleware stands between the gate and Huma's validation and
		// handler: the gate finds the moment between them by the handler's call for its
		// context, which a later middleware reading the context would bring forward (before
		// validation), and one replacing the context without reading it would hide.
		op.Middlewares = append(slices.Clone(op.Middlewares), in.gate)
	}
	next(op)
}
