package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/remedy-go/remedy"
)

// Stability says how far a client may rely on a code.
type Stability string

// Stabilities. A client may branch on a stable code; a beta code may still change its status,
// category or retry semantics; a deprecated code is still emitted but will be replaced (its
// Related codes name the replacement).
const (
	Stable     Stability = "stable"
	Beta       Stability = "beta"
	Deprecated Stability = "deprecated"
)

// Code is one error code's definition: everything an agent or a developer needs to act on it.
// The registry turns it into the envelope a failure carries (Envelope), the generated docs
// (Registry.WriteMarkdown), and the error vocabulary other descriptions list.
type Code struct {
	// Code is the stable machine code, snake_case: [a-z][a-z0-9_]*.
	Code string
	// Status is the HTTP status the failure is sent with, 400–599.
	Status int
	// Title is a short human title ("Rate limited"); by default the code in words
	// ("card_declined" → "Card declined").
	Title string
	// Category is the broad kind of failure; empty leaves it to the client, which infers one
	// from the code and the status.
	Category remedy.Category
	// Severity defaults to remedy.SeverityError. Info and warning are refused: the reference
	// client treats an envelope of either severity as a success that carries a notice.
	Severity remedy.Severity
	// Retryable says whether the same request, sent again unchanged, can succeed later, and
	// goes out as the body's retryable flag, which the reference client reads before any
	// header or status default. It is true for failures that pass (rate limits,
	// unavailability, a duplicate still in flight, a state that advances on its own), and
	// false when the request itself must change: a validation code, whose issues name the
	// fields to fix (the client repairs those whatever the flag says, and reads a failure
	// that names fields as not retryable even when it says true), or a confirmation the
	// request has to carry. It is false too when no change the client can make will help
	// (credentials, permissions, billing, a missing resource), and when a second execution
	// could repeat a side effect (an internal error of unknown cause). A generic retrier that
	// reads only the flag therefore never resends what will fail the same way. Retryable
	// with Severity fatal is refused, since the client stops on fatal whatever the flag says.
	Retryable bool
	// Hint is one sentence an agent can act on, sent in the envelope.
	Hint string
	// Cause is a short text of what causes the failure; the envelope's message when the
	// server gives none.
	Cause string
	// Repair is the recipe an agent follows to get past the failure, as steps; it goes into
	// the docs, not the envelope.
	Repair string
	// Related lists related codes; each must be registered (before, or in the same Register
	// call). Lookup and Codes share the registry's slice: do not modify it.
	Related []string
	// Stability defaults to Stable.
	Stability Stability
	// DocsURL is where the code is documented. Empty: the registry derives one from its docs
	// base, if it has one (Registry.SetDocsBase).
	DocsURL string
}

// severity is the code's severity, remedy.SeverityError when unset.
func (c Code) severity() remedy.Severity {
	if c.Severity == "" {
		return remedy.SeverityError
	}
	return c.Severity
}

// Envelope returns the envelope for this code: its status, code, title, message (c.Cause when
// message is empty), retryable flag stated by the body (RetrySource remedy.RetryFromBody),
// severity (remedy.SeverityError when unset), category, hint, related codes and docs URL. The
// caller adds what only the failure knows: issues, a wait, a next operation, a confirmation
// token, a trace ID. The envelope holds its own copy of the related codes.
func (c Code) Envelope(message string) *remedy.Envelope {
	env := c.envelope(message)
	env.RelatedCodes = slices.Clone(env.RelatedCodes)
	return &env
}

// envelope is Envelope as a value whose related codes are the registry's own: for an envelope
// that is only written, on the stack of the one writing it.
func (c Code) envelope(message string) remedy.Envelope {
	if message == "" {
		message = c.Cause
	}
	return remedy.Envelope{
		Status:       c.Status,
		Code:         c.Code,
		Title:        c.Title,
		Message:      message,
		Retryable:    c.Retryable,
		RetrySource:  remedy.RetryFromBody,
		Severity:     c.severity(),
		Category:     c.Category,
		Hint:         c.Hint,
		RelatedCodes: c.Related,
		DocsURL:      c.DocsURL,
	}
}

// Registry holds the codes a server may emit. It is safe for concurrent use: Lookup and Codes
// read an immutable snapshot without locking (Lookup allocates nothing, since it runs for
// every failure), and Register and SetDocsBase replace the snapshot under a lock, so that a
// reader sees either all of a Register call's codes or none. The zero Registry is empty and
// ready to use; NewRegistry holds the built-in codes.
type Registry struct {
	mu   sync.Mutex // serializes writers
	snap atomic.Pointer[registrySnapshot]
}

// registrySnapshot is one immutable state of a Registry.
type registrySnapshot struct {
	base   string          // docs base; "" derives no URLs
	own    map[string]Code // as registered (defaults filled), DocsURL as given
	byCode map[string]Code // as served: DocsURL derived from base where own is empty
	sorted []Code          // byCode's values, sorted by code
}

// NewRegistry returns a registry holding the built-in codes, the vocabulary of the agent
// envelope the reference server and client share (see the package's generated error docs).
func NewRegistry() *Registry {
	r := new(Registry)
	if err := r.Register(builtinCodes()...); err != nil {
		panic("server: built-in codes: " + err.Error())
	}
	return r
}

// Register adds codes to the registry. Each is validated: its code is snake_case
// ([a-z][a-z0-9_]*) and not registered already nor repeated in the call; its status is
// 400–599; it has a title; its category, severity and stability, when set, are known ones
// (severity not info or warning, and not fatal with Retryable); each related code is
// registered or in the same call, and is not the code itself nor listed twice. Severity
// defaults to remedy.SeverityError and Stability to Stable. The Related slice is copied.
//
// Register is all-or-nothing: when any code is refused, none is added, and the error names
// every refused code with its problems.
func (r *Registry) Register(codes ...Code) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	if old == nil {
		old = &registrySnapshot{}
	}

	inCall := make(map[string]int, len(codes)) // code → its first index in the call
	for i, c := range codes {
		if _, dup := inCall[c.Code]; !dup {
			inCall[c.Code] = i
		}
	}
	known := func(code string) bool {
		_, ok := old.own[code]
		_, here := inCall[code]
		return ok || here
	}

	var errs []error
	added := make([]Code, 0, len(codes))
	for i, c := range codes {
		problems := codeProblems(c, known)
		if _, ok := old.own[c.Code]; ok {
			problems = append(problems, "already registered")
		} else if first := inCall[c.Code]; first != i && c.Code != "" {
			problems = append(problems, fmt.Sprintf("registered twice in this call (at %d and %d)", first, i))
		}
		if len(problems) > 0 {
			errs = append(errs, fmt.Errorf("server: register code %q (argument %d): %s", c.Code, i, strings.Join(problems, "; ")))
			continue
		}
		if c.Severity == "" {
			c.Severity = remedy.SeverityError
		}
		if strings.TrimSpace(c.Title) == "" {
			c.Title = titleOf(c.Code)
		}
		if c.Stability == "" {
			c.Stability = Stable
		}
		c.Related = slices.Clip(slices.Clone(c.Related))
		added = append(added, c)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}

	own := make(map[string]Code, len(old.own)+len(added))
	for k, c := range old.own {
		own[k] = c
	}
	for _, c := range added {
		own[c.Code] = c
	}
	r.snap.Store(newRegistrySnapshot(own, old.base))
	return nil
}

// codeProblems lists what is wrong with one code, besides duplicates; known reports whether a
// related code exists.
func codeProblems(c Code, known func(string) bool) []string {
	var p []string
	if !isSnakeCode(c.Code) {
		p = append(p, "code must be snake_case: [a-z][a-z0-9_]*")
	}
	if c.Status < 400 || c.Status > 599 {
		p = append(p, fmt.Sprintf("status %d is not an error status (400–599)", c.Status))
	}
	switch c.Category {
	case "", remedy.CategoryValidation, remedy.CategoryAuth, remedy.CategoryRateLimit,
		remedy.CategoryState, remedy.CategoryDependency, remedy.CategoryInternal:
	default:
		p = append(p, fmt.Sprintf("unknown category %q", c.Category))
	}
	switch c.Severity {
	case "", remedy.SeverityError:
	case remedy.SeverityFatal:
		if c.Retryable {
			p = append(p, "retryable contradicts severity fatal (the client stops on fatal)")
		}
	case remedy.SeverityInfo, remedy.SeverityWarning:
		p = append(p, fmt.Sprintf("severity %q is for notices on successes (the client would treat this failure as a success)", c.Severity))
	default:
		p = append(p, fmt.Sprintf("unknown severity %q", c.Severity))
	}
	switch c.Stability {
	case "", Stable, Beta, Deprecated:
	default:
		p = append(p, fmt.Sprintf("unknown stability %q", c.Stability))
	}
	for i, rel := range c.Related {
		switch {
		case rel == c.Code:
			p = append(p, "relates to itself")
		case slices.Contains(c.Related[:i], rel):
			p = append(p, fmt.Sprintf("related code %q listed twice", rel))
		case !known(rel):
			p = append(p, fmt.Sprintf("related code %q is not registered", rel))
		}
	}
	return p
}

// isSnakeCode reports whether s matches [a-z][a-z0-9_]*.
func isSnakeCode(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// newRegistrySnapshot derives the served codes from the registered ones and the docs base.
func newRegistrySnapshot(own map[string]Code, base string) *registrySnapshot {
	s := &registrySnapshot{base: base, own: own, byCode: make(map[string]Code, len(own)), sorted: make([]Code, 0, len(own))}
	for k, c := range own {
		if c.DocsURL == "" && base != "" {
			c.DocsURL = base + "#" + c.Code
		}
		s.byCode[k] = c
		s.sorted = append(s.sorted, c)
	}
	slices.SortFunc(s.sorted, func(a, b Code) int { return strings.Compare(a.Code, b.Code) })
	return s
}

// Lookup returns the code's definition, with its derived DocsURL, and whether it is
// registered. It takes no lock and allocates nothing.
func (r *Registry) Lookup(code string) (Code, bool) {
	s := r.snap.Load()
	if s == nil {
		return Code{}, false
	}
	c, ok := s.byCode[code]
	return c, ok
}

// Codes returns every registered code, sorted by code, with derived DocsURLs. The slice is
// the caller's; the Related slices in it are shared with the registry.
func (r *Registry) Codes() []Code {
	s := r.snap.Load()
	if s == nil {
		return nil
	}
	return slices.Clone(s.sorted)
}

// SetDocsBase sets the URL codes without a DocsURL of their own are documented at: each gets
// base + "#" + code, the anchor of its section in the output of WriteMarkdown. It applies to
// codes registered before and after the call; an empty base derives no URLs.
func (r *Registry) SetDocsBase(url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	own := map[string]Code{}
	if old := r.snap.Load(); old != nil {
		own = old.own
	}
	r.snap.Store(newRegistrySnapshot(own, url))
}

// builtinCodes is the vocabulary NewRegistry starts with. Each code's Retryable says whether
// the same request, unchanged, can succeed later (see Code.Retryable), so that client.Decide
// and a retrier that reads only the flag (go-retryablehttp with package retryable, say) both
// do the right thing:
//
//   - invalid_parameter, invalid_json, invalid_body, invalid_input: not retryable. Sent
//     unchanged, the request fails the same way; its repair is a changed request, which the
//     client makes from the issues these codes are sent with (client.Decide hands a failure
//     that names fields to its Rewriter, whatever the flag says).
//   - unsupported_media_type, payload_too_large, method_not_allowed, idempotency_key_required,
//     idempotency_key_invalid: not retryable. The fix is in the client's transport or in splitting the work, which no
//     rewrite of the arguments can make, so the client stops and reports.
//   - unauthorized, forbidden, payment_required: not retryable; a person must act.
//   - not_found: not retryable. The fix is another identifier, and a rewriter that guessed one
//     could act on someone else's resource; the agent looks it up instead.
//   - conflict: not retryable; the resource changed, and whether the call still makes sense
//     is the agent's decision after reading it again.
//   - precondition_failed: retryable. The request is right and the resource's state is not
//     yet: the same request succeeds once the state has moved. Sent with next_operation, the
//     client runs that first and then sends the call again unchanged (it acts on
//     next_operation, not on the flag); sent without one, the state advances on its own (a
//     job still running), and the client retries unchanged after a backoff. A retrier that
//     cannot run next_operation spends its retries on a 409 that changed nothing, which is
//     safe: nothing ran.
//   - confirmation_required: not retryable. The same request without the token is
//     challenged again (and a new token issued) however often it is sent; the request that
//     succeeds is another one, carrying the token, which the client sends when its
//     ConfirmPolicy approves: it acts on the token and the code, not the flag. The same holds
//     for the answer without a token to a call whose person was asked over MCP elicitation
//     and gave no answer: called again, the person is asked again, but only their answer,
//     not time, can make it succeed.
//   - confirmation_invalid, confirmation_declined, idempotency_key_reused: not retryable; the
//     client stops on their codes.
//   - idempotency_in_flight, rate_limited, unavailable: retryable unchanged after the wait.
//   - internal_error: not retryable. Its cause is unknown, so the operation may have taken
//     effect before it failed, and since the server never stores failures under an
//     idempotency key, a retry would run it again. Handlers that know a failure is transient
//     and had no effect return unavailable instead.
//
// Statuses follow the IETF Idempotency-Key draft for the idempotency codes (400 for a missing
// key, 422 for a key reused with another payload, 409 for a duplicate in flight), and keep the
// whole confirmation flow on 409: confirmation_invalid is 409 rather than 422 because the
// token travels in a header, not in the content 422 would call unprocessable, and what makes
// it invalid (spent, expired, bound to another payload) is the server's state.
func builtinCodes() []Code {
	return []Code{
		{
			Code: "invalid_parameter", Status: 400, Title: "Invalid parameter",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Change the path or query parameters named in issues to a value each issue allows, then send the call again.",
			Cause: "A path or query parameter is missing, malformed, or outside its allowed values.",
			Repair: "1. Read issues: each names a parameter by its pointer, what was expected and what arrived.\n" +
				"2. Replace each named value with its suggested_value, one of its allowed_values, or a value that matches expected.\n" +
				"3. Send the call again; leave the parameters no issue names as they were.",
			Related: []string{"invalid_body", "invalid_input"},
		},
		{
			Code: "invalid_json", Status: 400, Title: "Invalid JSON",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Send the arguments again as one well-formed JSON object.",
			Cause: "The request body is not well-formed JSON, not the JSON object the operation takes, or an object naming one member twice.",
			Repair: "1. Read the issue: its message says where the body stopped being valid JSON; an issue with code duplicate_member points at the member named twice.\n" +
				"2. Encode the arguments as one JSON object with a JSON encoder, not by hand: double-quoted strings, no trailing commas, no comments, UTF-8, each member once.\n" +
				"3. Send the call again.",
			Related: []string{"invalid_body", "unsupported_media_type"},
		},
		{
			Code: "invalid_body", Status: 422, Title: "Invalid body",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Change the body fields named in issues to what each issue expects, then send the call again.",
			Cause: "The request body is well-formed JSON but does not match the operation's input schema.",
			Repair: "1. Read issues: each points at a field (a JSON Pointer) with the schema keyword it broke, what was expected and what arrived; schema holds the violated subschema.\n" +
				"2. Set each named field to its suggested_value or one of its allowed_values when given; otherwise to a value of the expected type, range or format; add missing required fields and drop unknown ones.\n" +
				"3. Send the call again; leave the fields no issue names as they were.",
			Related: []string{"invalid_input", "invalid_json", "invalid_parameter"},
		},
		{
			Code: "invalid_input", Status: 422, Title: "Invalid input",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Change the fields named in issues as their messages say, then send the call again.",
			Cause: "The input matches the schema but breaks a rule the operation checks itself: a relation between fields, a limit, a value the current data does not allow.",
			Repair: "1. Read issues: each points at a field and says which rule it broke.\n" +
				"2. Change those fields so that the rule holds, using suggested_value or allowed_values when given.\n" +
				"3. Send the call again.",
			Related: []string{"conflict", "invalid_body", "not_found"},
		},
		{
			Code: "unsupported_media_type", Status: 415, Title: "Unsupported media type",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Send the body as JSON with Content-Type: application/json.",
			Cause: "The request's Content-Type is not one the operation accepts.",
			Repair: "1. Set Content-Type: application/json on the request.\n" +
				"2. Encode the body as JSON.\n" +
				"3. Send the call again. The fault is in the client's transport, not in the arguments, so a rewrite of the arguments cannot fix it.",
			Related: []string{"invalid_json"},
		},
		{
			Code: "payload_too_large", Status: 413, Title: "Payload too large",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Send less in one call: split the items across several calls, or leave out optional fields.",
			Cause: "The request body is larger than the server accepts.",
			Repair: "1. Find the limit in the message or in the operation's documentation.\n" +
				"2. Split the work into several calls whose bodies stay under the limit, or remove optional or oversized fields.\n" +
				"3. Send the smaller calls; this body will never be accepted as it is.",
			Related: []string{"invalid_body"},
		},
		{
			Code: "invalid_request", Status: 400, Title: "Invalid request",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Change the request as the message says (a header, the method, the session); sent again unchanged, it fails the same way.",
			Cause: "The request does not follow the transport protocol of the endpoint (the MCP streamable HTTP transport): a required header is missing, names a version or a media type it does not support, or the message is not one it handles.",
			Repair: "1. Read the message: it names the header or the part of the request at fault, and what the endpoint supports.\n" +
				"2. Fix the client's transport (an MCP client library does this for its caller); the tool's arguments are not at fault, so a rewrite of them cannot help.\n" +
				"3. Send the request again.",
			Related: []string{"invalid_json", "unsupported_media_type"},
		},
		{
			Code: "unauthorized", Status: 401, Title: "Unauthorized",
			Category: remedy.CategoryAuth, Retryable: false,
			Hint:  "Obtain valid credentials and send them in the Authorization header; the call as it is will fail again.",
			Cause: "The request has no credentials, or credentials that are invalid, expired or revoked.",
			Repair: "1. Check that the Authorization header is present and well-formed.\n" +
				"2. Refresh an expired token, or ask the operator for a new credential.\n" +
				"3. Send the call again with it. Until the caller is authenticated the server says nothing about the operation itself.",
			Related: []string{"forbidden"},
		},
		{
			Code: "forbidden", Status: 403, Title: "Forbidden",
			Category: remedy.CategoryAuth, Retryable: false,
			Hint:  "Do not retry: ask for the missing permission, or act on a resource the caller may use.",
			Cause: "The caller is authenticated but not allowed to perform this operation on this resource.",
			Repair: "1. Stop: other credentials or a grant are needed, which the caller cannot give itself.\n" +
				"2. Report to the user or operator which operation and resource were refused.\n" +
				"3. Call again once the permission has been granted.",
			Related: []string{"not_found", "payment_required", "unauthorized"},
		},
		{
			Code: "not_found", Status: 404, Title: "Not found",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Look the identifier up (list or search the collection) and call again with one that exists; do not guess.",
			Cause: "The resource the call names does not exist, or the caller may not see it.",
			Repair: "1. Check the identifier in the path or arguments for typos and stale values.\n" +
				"2. List or search the collection to find the right identifier.\n" +
				"3. Call again with that identifier. A guessed identifier could name another resource, so the reference client does not rewrite one by itself.",
			Related: []string{"forbidden", "invalid_input", "method_not_allowed"},
		},
		{
			Code: "method_not_allowed", Status: 405, Title: "Method not allowed",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Use one of the methods in the Allow header, or the operation the API documents for this action.",
			Cause: "The resource exists but does not support this HTTP method.",
			Repair: "1. Read the Allow header of the response.\n" +
				"2. Find the operation that does what was intended (the API's OpenAPI document lists them).\n" +
				"3. Call that operation instead.",
			Related: []string{"not_found"},
		},
		{
			Code: "conflict", Status: 409, Title: "Conflict",
			Category: remedy.CategoryState, Retryable: false,
			Hint:  "Read the resource's current state, then decide whether the call is still needed and what it should change.",
			Cause: "The call conflicts with the current state of the resource: it exists already, or it changed since the caller read it.",
			Repair: "1. Fetch the resource again.\n" +
				"2. If the change is already there, stop: the work is done.\n" +
				"3. Otherwise apply the change to the current version and send a new call.",
			Related: []string{"idempotency_in_flight", "precondition_failed"},
		},
		{
			Code: "precondition_failed", Status: 409, Title: "Precondition failed",
			Category: remedy.CategoryState, Retryable: true,
			Hint:  "Run next_operation with next_operation_args, then send this call again unchanged.",
			Cause: "The resource is not in the state the operation requires (current_status is not required_status); another operation must run first.",
			Repair: "1. Read current_status and required_status to see what has to change.\n" +
				"2. Run next_operation with next_operation_args; the reference client does so itself when the operation is registered with it.\n" +
				"3. Send the original call again, unchanged.",
			Related: []string{"confirmation_required", "conflict"},
		},
		{
			Code: "confirmation_required", Status: 409, Title: "Confirmation required",
			Category: remedy.CategoryState, Retryable: false,
			Hint:  "If the user approves, send the identical call again with confirmationToken in the X-Confirmation-Token header (or the confirmationToken argument).",
			Cause: "The operation needs explicit confirmation before it runs (it is destructive, costly or irreversible); nothing was done.",
			Repair: "1. Show the message to whoever may approve: it says what the call will do.\n" +
				"2. If approved, send the same call with the byte-identical payload and the token in X-Confirmation-Token (REST) or the confirmationToken argument (MCP).\n" +
				"3. The token is single-use, bound to the caller, the operation and the payload, and expires after 5 minutes; a changed payload needs a new challenge.",
			Related: []string{"confirmation_invalid"},
		},
		{
			Code: "confirmation_invalid", Status: 409, Title: "Confirmation invalid",
			Category: remedy.CategoryState, Retryable: false,
			Hint:  "Do not send this token again: send the call without a token to get a new challenge, and have that one approved.",
			Cause: "The confirmation token is unknown, expired, already used, or was issued for another caller, operation or payload; nothing was done, and the token is spent.",
			Repair: "1. Discard the token.\n" +
				"2. Send the call without a token: the server answers confirmation_required with a new one.\n" +
				"3. Get that challenge approved, then send the identical payload with the new token.",
			Related: []string{"confirmation_required"},
		},
		{
			Code: "payment_required", Status: 402, Title: "Payment required",
			Category: remedy.CategoryAuth, Retryable: false,
			Hint:  "Do not retry: a person must upgrade the plan or add credit before this call can succeed.",
			Cause: "The account's plan, credit or quota does not cover this operation.",
			Repair: "1. Stop calling operations that cost money.\n" +
				"2. Report to the user or operator that the account needs payment or a higher plan.\n" +
				"3. Call again only once they say the account was updated.",
			Related: []string{"forbidden", "rate_limited"},
		},
		{
			Code: "idempotency_key_required", Status: 400, Title: "Idempotency key required",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Send the call again with an Idempotency-Key header holding a new unique value for this operation.",
			Cause: "The operation requires an Idempotency-Key and the request had none.",
			Repair: "1. Mint one key per logical operation: a UUID, or another value with at least 128 random bits.\n" +
				"2. Send it in the Idempotency-Key header (or the idempotencyKey argument over MCP).\n" +
				"3. Reuse that key for every retry of the same payload, and mint a new one when the payload changes. The reference client does this for every call not declared idempotent.",
			Related: []string{"idempotency_in_flight", "idempotency_key_reused"},
		},
		{
			Code: "idempotency_key_invalid", Status: 400, Title: "Idempotency key invalid",
			Category: remedy.CategoryValidation, Retryable: false,
			Hint:  "Send the call again with an Idempotency-Key of 1 to 255 printable ASCII characters, bare or as a quoted string.",
			Cause: "The Idempotency-Key header is empty, longer than 255 characters, holds characters outside printable ASCII, is sent more than once, or is a malformed quoted string; nothing was done.",
			Repair: "1. Mint a key of printable ASCII, such as a UUID or 26 base32 characters.\n" +
				"2. Send it once, in one Idempotency-Key header: bare, or as an RFC 8941 string in double quotes.\n" +
				"3. Send the call again with it, and reuse it for every retry of the same payload.",
			Related: []string{"idempotency_key_required", "idempotency_key_reused"},
		},
		{
			Code: "idempotency_key_reused", Status: 422, Title: "Idempotency key reused",
			Category: remedy.CategoryState, Retryable: false,
			Hint:  "Mint a new Idempotency-Key for a changed payload; to retry the first call, send its original payload with this key.",
			Cause: "The Idempotency-Key was used before with a different payload for this operation; nothing was done.",
			Repair: "1. Decide which call was meant: the first payload, or this new one.\n" +
				"2. To retry the first, send its payload unchanged with this key: the server replays its result.\n" +
				"3. To send the new payload, mint a new key for it.",
			Related: []string{"idempotency_in_flight", "idempotency_key_required"},
		},
		{
			Code: "idempotency_in_flight", Status: 409, Title: "Idempotent request in flight",
			Category: remedy.CategoryState, Retryable: true,
			Hint:  "Wait retry_after_ms (or a short backoff), then send the identical call with the same key to get its result.",
			Cause: "A request with the same Idempotency-Key is still being processed.",
			Repair: "1. Change neither the payload nor the key.\n" +
				"2. Wait as asked.\n" +
				"3. Send the call again: once the first request has finished, the server replays its result (Idempotency-Replayed: true).",
			Related: []string{"conflict", "idempotency_key_reused"},
		},
		{
			Code: "rate_limited", Status: 429, Title: "Rate limited",
			Category: remedy.CategoryRateLimit, Retryable: true,
			Hint:  "Wait retry_after_ms (or the Retry-After header), then send the same call unchanged.",
			Cause: "The caller sent more requests than its rate limit allows in the current window.",
			Repair: "1. Wait as long as retry_after_ms or Retry-After says.\n" +
				"2. Send the same call unchanged, with the same Idempotency-Key.\n" +
				"3. Slow down: spread later calls out instead of sending them in bursts.",
			Related: []string{"payment_required", "unavailable"},
		},
		{
			Code: "internal_error", Status: 500, Title: "Internal error",
			Category: remedy.CategoryInternal, Retryable: false,
			Hint:  "Do not retry blindly: check whether the operation took effect, and report the trace_id.",
			Cause: "The server failed in a way it did not anticipate; its logs hold the details under the trace_id.",
			Repair: "1. Keep the trace_id: it is how the operator finds this failure.\n" +
				"2. Before calling again, check whether the operation took effect (read the resource): a failure of unknown cause may come after the change was made, and the server does not keep failures under an idempotency key.\n" +
				"3. If it did not take effect, call again once; if that fails too, report the trace_id.",
			Related: []string{"unavailable"},
		},
		{
			Code: "unavailable", Status: 503, Title: "Service unavailable",
			Category: remedy.CategoryDependency, Retryable: true,
			Hint:  "Wait retry_after_ms (or back off), then send the same call unchanged.",
			Cause: "The server or a service it depends on cannot handle the call right now; nothing was done.",
			Repair: "1. Wait as long as retry_after_ms or Retry-After says, else back off exponentially.\n" +
				"2. Send the same call unchanged, with the same Idempotency-Key.\n" +
				"3. If it keeps failing past the call's time budget, report the outage.",
			Related: []string{"internal_error", "rate_limited"},
		},
		{
			Code: "confirmation_declined", Status: 409, Title: "Confirmation declined",
			Category: remedy.CategoryState, Retryable: false,
			Hint:  "Do not send the call again as it is: the person asked to confirm it said no.",
			Cause: "The operation needs confirmation, the server asked the client's user (MCP elicitation), and the user declined; nothing was done.",
			Repair: "1. Stop: a person refused this exact call.\n" +
				"2. Ask the user what they want instead; do not rephrase the same call to ask again.\n" +
				"3. Send a call only once the user has said what it should do; it is asked for confirmation again.",
			Related: []string{"confirmation_required", "person_required"},
		},
		{
			Code: "person_required", Status: 403, Title: "Person required",
			Category: remedy.CategoryAuth, Retryable: false,
			Hint:  "Call the operation over MCP from a client that declared the elicitation capability, so that the server can ask its user; no token can confirm it.",
			Cause: "Only a person may confirm this operation, and the call came where the server cannot ask one: over REST, from an MCP client without the elicitation capability, or on a stateless MCP endpoint with a client of a protocol version before 2026-07-28; nothing was done.",
			Repair: "1. Do not look for a confirmation token: none is issued or accepted for this operation.\n" +
				"2. Call it over the API's MCP endpoint from a client that declares elicitation (form mode), and route the question to the user.\n" +
				"3. If no such client is at hand, tell the user that the operation needs their confirmation in an MCP client.",
			Related: []string{"confirmation_required", "confirmation_declined", "forbidden"},
		},
	}
}

// titleOf spells a snake_case code as a title: "card_declined" → "Card declined".
func titleOf(code string) string {
	t := strings.ReplaceAll(code, "_", " ")
	if t == "" {
		return t
	}
	return strings.ToUpper(t[:1]) + t[1:]
}
