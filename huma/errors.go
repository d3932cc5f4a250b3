package remedyhuma

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// Error is the error model Install gives Huma: what huma.NewError was asked for (a status, a
// message, Huma's error details), read as a code of the registry when it is made, so that its
// status is the code's. It is written, through the group's transformer, as server's API
// writes a failure: the details become issues with JSON Pointers (Huma's body.items[0].name
// is /items/0/name; query.limit is /limit), the violated subschema is looked up in the
// operation's schema, a 500's cause is logged under the trace id and never sent. A
// *server.Problem or *remedy.Envelope a handler returns (which Huma hands to NewError as the
// cause of a 500) is written as it says.
type Error struct {
	status  int
	code    string // the registry's code; "" when cause says it
	message string
	details []*huma.ErrorDetail
	cause   error // a *server.Problem or *remedy.Envelope, or an error of unknown cause (a 500)
}

// Error implements error: the code and the message.
func (e *Error) Error() string {
	switch {
	case e.cause != nil && e.code == "":
		return e.cause.Error()
	case e.message == "":
		return e.code
	}
	return e.code + ": " + e.message
}

// GetStatus is the status the answer is sent with: its code's (huma.StatusError).
func (e *Error) GetStatus() int { return e.status }

// Code is the code of the registry the failure is answered with.
func (e *Error) Code() string {
	var p *server.Problem
	var env *remedy.Envelope
	switch {
	case e.code != "":
		return e.code
	case errors.As(e.cause, &p):
		return p.Code
	case errors.As(e.cause, &env):
		return env.Code
	}
	return server.CodeInternalError
}

// Unwrap returns the cause a handler gave, when it gave one.
func (e *Error) Unwrap() error { return e.cause }

// ContentType keeps the media type Huma negotiated (huma.ContentTypeFilter): the transformer
// sets the failure's own, application/json or application/problem+json, from the request.
func (e *Error) ContentType(ct string) string { return ct }

// MarshalJSON writes the canonical envelope without a request to read: no trace id but a new
// one, no subschema. Install's transformer writes an *Error itself; this is for one written by
// a Huma API without the contract.
func (e *Error) MarshalJSON() ([]byte, error) {
	in := current.Load()
	if in == nil || e.status < 400 {
		return []byte(`{}`), nil
	}
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	f := in.guard.Failure(r, e.problem(nil, nil))
	return f.Body, nil
}

// newError is huma.NewError's replacement.
func newError(status int, msg string, errs ...error) huma.StatusError {
	e := &Error{status: status, message: msg}
	if status < 400 {
		// 304 Not Modified and the like: a status without a body.
		return e
	}
	in := current.Load()
	for _, err := range errs {
		if err == nil {
			continue
		}
		var p *server.Problem
		var env *remedy.Envelope
		var d huma.ErrorDetailer
		switch {
		case errors.As(err, &p), errors.As(err, &env):
			e.cause, e.code, e.details = err, "", nil
			e.status = causeStatus(in, err)
			return e
		case errors.As(err, &d):
			e.details = append(e.details, d.ErrorDetail())
		case status >= 500:
			if e.cause == nil {
				e.cause = err
			}
		default:
			e.details = append(e.details, &huma.ErrorDetail{Message: err.Error()})
		}
	}
	e.code = codeFor(status, msg, e.details)
	e.status = http.StatusInternalServerError
	if in != nil {
		if c, ok := in.guard.Registry().Lookup(e.code); ok {
			e.status = c.Status
		}
	}
	return e
}

// causeStatus is the status a handler's *server.Problem or *remedy.Envelope is answered with.
func causeStatus(in *installed, err error) int {
	var p *server.Problem
	var env *remedy.Envelope
	switch {
	case errors.As(err, &p) && in != nil:
		if c, ok := in.guard.Registry().Lookup(p.Code); ok {
			return c.Status
		}
	case errors.As(err, &env):
		if env.Status >= 400 && env.Status <= 599 && env.Code != "" {
			return env.Status
		}
	}
	return http.StatusInternalServerError
}

// statusCodes are the codes Huma's statuses are read as, where the status alone says it.
var statusCodes = map[int]string{
	http.StatusUnauthorized:          server.CodeUnauthorized,
	http.StatusPaymentRequired:       server.CodePaymentRequired,
	http.StatusForbidden:             server.CodeForbidden,
	http.StatusNotFound:              server.CodeNotFound,
	http.StatusMethodNotAllowed:      server.CodeMethodNotAllowed,
	http.StatusConflict:              server.CodeConflict,
	http.StatusPreconditionFailed:    server.CodePreconditionFailed,
	http.StatusPreconditionRequired:  server.CodePreconditionFailed,
	http.StatusRequestEntityTooLarge: server.CodePayloadTooLarge,
	http.StatusUnsupportedMediaType:  server.CodeUnsupportedMediaType,
	http.StatusTooManyRequests:       server.CodeRateLimited,
	http.StatusBadGateway:            server.CodeUnavailable,
	http.StatusServiceUnavailable:    server.CodeUnavailable,
	http.StatusGatewayTimeout:        server.CodeUnavailable,
	http.StatusRequestTimeout:        server.CodeUnavailable,
}

// codeFor reads what Huma said as a code of the registry. Huma refuses input with 400 (a body
// that is not JSON, or missing) or 422 (a value its schema refuses), and names where with each
// detail's location: a location under body makes the failure invalid_body, one under path,
// query, header or cookie only, invalid_parameter.
func codeFor(status int, msg string, details []*huma.ErrorDetail) string {
	if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
		body, param := false, false
		for _, d := range details {
			switch root, _, _ := strings.Cut(d.Location, "."); root {
			case "body":
				if status == http.StatusBadRequest && d.Location == "body" {
					return server.CodeInvalidJSON
				}
				body = true
			case "path", "query", "header", "cookie":
				param = true
			}
		}
		switch {
		case body:
			return server.CodeInvalidBody
		case param:
			return server.CodeInvalidParameter
		case status == http.StatusBadRequest && strings.Contains(msg, "body is required"):
			return server.CodeInvalidBody
		}
		return server.CodeInvalidInput
	}
	if c, ok := statusCodes[status]; ok {
		return c
	}
	if status >= 500 {
		return server.CodeInternalError
	}
	return "invalid_request"
}

// defaultWait is the wait a 429 or 503 states when the handler gave none: the conformance rule
// rate-limit-wait, and remedy's loop, need one to wait.
const defaultWait = time.Second

// problem is e as server answers it. rc, the request's gate context (nil without one), gives
// the operation whose schema holds the violated subschema, and a wait a handler gave in a
// Retry-After header.
func (e *Error) problem(rc *reqCtx, oapi *huma.OpenAPI) error {
	if e.cause != nil && e.code == "" {
		return e.cause
	}
	if e.code == server.CodeInternalError {
		cause := e.cause
		if cause == nil {
			cause = fmt.Errorf("%d %s", e.status, e.String())
		}
		return cause
	}
	p := server.Error(e.code, e.message)
	switch e.code {
	case server.CodeInvalidJSON:
		why := "the body is not valid JSON"
		if len(e.details) > 0 && !leaky(e.details[0].Message) {
			why += ": " + e.details[0].Message
		}
		p.Message = why
		p.Issues = []remedy.Issue{{Path: "", Code: "syntax", Message: why}}
	case server.CodeInvalidBody, server.CodeInvalidParameter, server.CodeInvalidInput:
		p.Issues = issues(e.status, e.details)
		if len(p.Issues) == 0 && e.code == server.CodeInvalidBody {
			p.Issues = []remedy.Issue{{Path: "", Code: "required", Message: "the request body is required: send the arguments as one JSON object"}}
		}
		p.Message = summary(p.Issues, e.message)
		if rc != nil && oapi != nil {
			p.Schema = subschema(oapi, rc.Operation(), e.code, p.Issues)
		}
	case server.CodeRateLimited, server.CodeUnavailable:
		p.RetryAfter = defaultWait
		if rc != nil && rc.retryAfter > 0 {
			p.RetryAfter = rc.retryAfter
		}
	}
	return p
}

// String is what Huma said, for the log.
func (e *Error) String() string {
	var b strings.Builder
	b.WriteString(e.message)
	for _, d := range e.details {
		b.WriteString("; ")
		b.WriteString(d.Error())
	}
	return b.String()
}

// leaky reports whether a message of Huma's decoder names the server's Go types.
func leaky(msg string) bool {
	return strings.Contains(msg, "Go struct field") || strings.Contains(msg, "Go value of type")
}

// issues reads Huma's details as issues, by remedy's own reader of Huma's problem details (the
// one remedy.Parse uses for any Huma server): pointers from locations, and the rule, the bound,
// the pattern or the allowed values from Huma's messages.
func issues(status int, details []*huma.ErrorDetail) []remedy.Issue {
	kept := make([]*huma.ErrorDetail, 0, len(details))
	for _, d := range details {
		d := *d
		if strings.HasPrefix(d.Message, "expected required property") || strings.HasPrefix(d.Message, "unexpected property") {
			d.Value = nil // the object the member is missing from or unknown in: nothing of the fix
		}
		if leaky(d.Message) {
			d.Message = "the value does not match the operation's input schema"
		}
		kept = append(kept, &d)
	}
	b, err := json.Marshal(huma.ErrorModel{Status: status, Title: http.StatusText(status), Detail: "validation failed", Errors: kept})
	if err != nil {
		return nil
	}
	env, ok := remedy.Parse(status, http.Header{"Content-Type": {"application/problem+json"}}, b)
	if !ok {
		return nil
	}
	return env.Issues
}

// summary is the message of a validation failure: its issues, as server's API words them.
func summary(issues []remedy.Issue, fallback string) string {
	if len(issues) == 0 {
		return fallback
	}
	var b strings.Builder
	if len(issues) == 1 {
		b.WriteString("1 issue: ")
	} else {
		fmt.Fprintf(&b, "%d issues: ", len(issues))
	}
	for i, is := range issues {
		if i > 0 {
			b.WriteString("; ")
		}
		if i == 10 {
			fmt.Fprintf(&b, "and %d more", len(issues)-i)
			break
		}
		if is.Path != "" {
			b.WriteString(is.Path)
			b.WriteString(": ")
		}
		b.WriteString(is.Message)
	}
	return b.String()
}
