package remedyhuma

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// The OpenAPI document gets what server's API publishes in its own: per operation,
// x-agent-error-codes (every code the operation may be answered with), x-confirmation-required,
// x-ax-idempotent, x-ax-retryable and x-idempotency-key, the Idempotency-Key and
// X-Confirmation-Token headers, and error responses grouped by status, described by the
// envelope's schemas; for the document, those schemas in its components, the list of every
// code (x-agent-error-codes) and the catalog (x-agent-errors: status, retryable, severity,
// category, hint).

var (
	docMu sync.Mutex // guards the document's extensions, which registrations update
)

// document adds the envelope's schemas to the document's components.
func (in *installed) document() {
	oapi := in.api.OpenAPI()
	if oapi.Components == nil {
		oapi.Components = &huma.Components{}
	}
	if oapi.Components.Schemas == nil {
		oapi.Components.Schemas = huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	}
	schemas := oapi.Components.Schemas.Map()
	for name, raw := range server.EnvelopeSchemas() {
		var members map[string]any
		if json.Unmarshal(raw, &members) == nil {
			// Extensions are written as they are: the schema, member for member.
			schemas[name] = &huma.Schema{Extensions: members}
		}
	}
	docMu.Lock()
	defer docMu.Unlock()
	in.catalog(oapi, server.CodeNotFound, server.CodeMethodNotAllowed)
}

// catalog adds codes to the document's x-agent-error-codes and x-agent-errors.
func (in *installed) catalog(oapi *huma.OpenAPI, codes ...string) {
	if oapi.Extensions == nil {
		oapi.Extensions = map[string]any{}
	}
	all, _ := oapi.Extensions["x-agent-error-codes"].([]string)
	cat, _ := oapi.Extensions["x-agent-errors"].(map[string]any)
	if cat == nil {
		cat = map[string]any{}
	}
	for _, n := range codes {
		c, ok := in.guard.Registry().Lookup(n)
		if !ok || slices.Contains(all, n) {
			continue
		}
		all = append(all, n)
		entry := map[string]any{"status": c.Status, "retryable": c.Retryable,
			"severity": string(cmp.Or(c.Severity, remedy.SeverityError))}
		if c.Category != "" {
			entry["category"] = string(c.Category)
		}
		if c.Hint != "" {
			entry["hint"] = c.Hint
		}
		cat[n] = entry
	}
	slices.Sort(all)
	oapi.Extensions["x-agent-error-codes"] = all
	oapi.Extensions["x-agent-errors"] = cat
}

// emits lists the codes op may be answered with, sorted by status and name.
func (in *installed) emits(op *huma.Operation, p policy) []server.Code {
	names := []string{server.CodeInternalError}
	if op.RequestBody != nil {
		names = append(names, server.CodeInvalidJSON, server.CodeInvalidBody, server.CodeUnsupportedMediaType, server.CodePayloadTooLarge)
	}
	for _, prm := range op.Parameters {
		if prm != nil && prm.Ref == "" && prm.In != "" && !isOurs(prm) {
			names = append(names, server.CodeInvalidParameter)
			break
		}
	}
	if p.confirm {
		names = append(names, server.CodeConfirmationRequired, server.CodeConfirmationInvalid, server.CodeUnavailable)
	}
	if p.idem != server.IdempotencyOff {
		names = append(names, server.CodeIdempotencyKeyInvalid, server.CodeIdempotencyKeyReused, server.CodeIdempotencyInFlight, server.CodeUnavailable)
		if p.idem == server.IdempotencyRequired {
			names = append(names, server.CodeIdempotencyKeyRequired)
		}
	}
	for _, s := range op.Errors {
		names = append(names, declared(s))
	}
	names = append(names, p.codes...)
	var codes []server.Code
	for _, n := range names {
		if c, ok := in.guard.Registry().Lookup(n); ok && !slices.ContainsFunc(codes, func(x server.Code) bool { return x.Code == n }) {
			codes = append(codes, c)
		}
	}
	slices.SortFunc(codes, func(x, y server.Code) int {
		return cmp.Or(cmp.Compare(x.Status, y.Status), strings.Compare(x.Code, y.Code))
	})
	return codes
}

// declared is the code of a status Huma's op.Errors lists.
func declared(status int) string {
	if c, ok := statusCodes[status]; ok {
		return c
	}
	switch {
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		return server.CodeInvalidInput
	case status >= 500:
		return server.CodeInternalError
	}
	return "invalid_request"
}

func isOurs(p *huma.Param) bool {
	return p.In == "header" && (strings.EqualFold(p.Name, remedy.HeaderIdempotencyKey) || strings.EqualFold(p.Name, remedy.HeaderConfirmationToken))
}

// describe adds op's contract to its OpenAPI description.
func (in *installed) describe(op *huma.Operation, p policy) {
	codes := in.emits(op, p)
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = c.Code
	}
	idempotentMethod := op.Method == http.MethodGet || op.Method == http.MethodHead || op.Method == http.MethodPut ||
		op.Method == http.MethodDelete || op.Method == http.MethodOptions
	ext := make(map[string]any, len(op.Extensions)+5)
	for k, v := range op.Extensions {
		ext[k] = v
	}
	ext["x-agent-error-codes"] = names
	ext["x-confirmation-required"] = p.confirm
	ext["x-ax-idempotent"] = idempotentMethod || p.idem != server.IdempotencyOff
	// Retried unchanged, a call without a key runs again where the key is optional.
	ext["x-ax-retryable"] = idempotentMethod || p.idem == server.IdempotencyRequired
	params := slices.Clone(op.Parameters)
	switch p.idem {
	case server.IdempotencyOptional, server.IdempotencyRequired:
		mode := "optional"
		if p.idem == server.IdempotencyRequired {
			mode = "required"
		}
		ext["x-idempotency-key"] = mode
		params = append(params, &huma.Param{Name: remedy.HeaderIdempotencyKey, In: "header", Required: p.idem == server.IdempotencyRequired,
			Description: "One unique key per logical call, reused for every retry of that call (1 to 255 printable ASCII characters; bare or an RFC 8941 string).",
			Schema:      &huma.Schema{Type: huma.TypeString, MinLength: ptr(1)}})
	}
	if p.confirm {
		params = append(params, &huma.Param{Name: remedy.HeaderConfirmationToken, In: "header",
			Description: "The confirmationToken of a 409 confirmation_required answer, sent with the identical call once the user approved it. Single-use.",
			Schema:      &huma.Schema{Type: huma.TypeString, MaxLength: ptr(256)}})
		notes := "Confirmation required: a call without a token is answered 409 confirmation_required, and nothing is done. " +
			"If the user approves, send the identical call again with the envelope's confirmationToken in the X-Confirmation-Token header. " +
			"A token is single-use and bound to the caller, this operation and the exact arguments; a spent or foreign one is answered 409 confirmation_invalid."
		op.Description = strings.TrimSpace(op.Description + "\n\n" + notes)
	}
	op.Extensions = ext
	op.Parameters = params

	responses := make(map[string]*huma.Response, len(op.Responses))
	for status, r := range op.Responses {
		if n, err := strconv.Atoi(status); status != "default" && (err != nil || n < 400) {
			responses[status] = r
		}
	}
	for i := 0; i < len(codes); {
		j := i
		for j < len(codes) && codes[j].Status == codes[i].Status {
			j++
		}
		responses[strconv.Itoa(codes[i].Status)] = errorResponse(codes[i:j])
		i = j
	}
	if p.idem != server.IdempotencyOff {
		for status, r := range responses {
			if n, _ := strconv.Atoi(status); n >= 200 && n < 300 && r != nil {
				h := make(map[string]*huma.Param, len(r.Headers)+1)
				for k, v := range r.Headers {
					h[k] = v
				}
				h[remedy.HeaderReplayed] = &huma.Param{Description: "true when the response is the stored result of an earlier call with the same Idempotency-Key, not a new execution.",
					Schema: &huma.Schema{Type: huma.TypeString, Enum: []any{"true"}}}
				cp := *r
				cp.Headers = h
				responses[status] = &cp
			}
		}
	}
	op.Responses = responses

	docMu.Lock()
	defer docMu.Unlock()
	in.catalog(in.api.OpenAPI(), names...)
}

// errorResponse describes the codes that share one status, as server's API does.
func errorResponse(codes []server.Code) *huma.Response {
	var b strings.Builder
	fmt.Fprintf(&b, "%s. The body is the error envelope; its code is one of:", http.StatusText(codes[0].Status))
	retryAfter := false
	names := make([]string, len(codes))
	for i, c := range codes {
		retry := "not retryable"
		if c.Retryable {
			retry = "retryable"
		}
		fmt.Fprintf(&b, "\n- `%s` (%d, %s)", c.Code, c.Status, retry)
		if c.Hint != "" {
			b.WriteString(": " + c.Hint)
		}
		names[i] = c.Code
		retryAfter = retryAfter || c.Status == http.StatusTooManyRequests || c.Status == http.StatusServiceUnavailable || c.Code == server.CodeIdempotencyInFlight
	}
	r := &huma.Response{
		Description: b.String(),
		Content: map[string]*huma.MediaType{
			"application/json":        {Schema: &huma.Schema{Ref: "#/components/schemas/Envelope"}},
			remedy.ProblemContentType: {Schema: &huma.Schema{Ref: "#/components/schemas/Problem"}},
		},
		Extensions: map[string]any{"x-agent-error-codes": names},
	}
	if retryAfter {
		r.Headers = map[string]*huma.Param{"Retry-After": {Description: "Seconds to wait before retrying (the envelope's retry_after_ms says it to the millisecond).",
			Schema: &huma.Schema{Type: huma.TypeInteger, Minimum: ptr(0.0)}}}
	}
	return r
}

func ptr[T any](v T) *T { return &v }
