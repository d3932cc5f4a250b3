package server

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/remedy-go/remedy"
)

// The built-in codes the pipeline itself emits, and that handlers may return.
const (
	CodeInvalidParameter       = "invalid_parameter"
	CodeInvalidJSON            = "invalid_json"
	CodeInvalidBody            = "invalid_body"
	CodeInvalidInput           = "invalid_input"
	CodeUnsupportedMediaType   = "unsupported_media_type"
	CodePayloadTooLarge        = "payload_too_large"
	CodeUnauthorized           = "unauthorized"
	CodeForbidden              = "forbidden"
	CodeNotFound               = "not_found"
	CodeMethodNotAllowed       = "method_not_allowed"
	CodeConflict               = "conflict"
	CodePreconditionFailed     = "precondition_failed"
	CodeConfirmationRequired   = "confirmation_required"
	CodeConfirmationInvalid    = "confirmation_invalid"
	CodePaymentRequired        = "payment_required"
	CodeIdempotencyKeyRequired = "idempotency_key_required"
	CodeIdempotencyKeyInvalid  = "idempotency_key_invalid"
	CodeIdempotencyKeyReused   = "idempotency_key_reused"
	CodeIdempotencyInFlight    = "idempotency_in_flight"
	CodeRateLimited            = "rate_limited"
	CodeInternalError          = "internal_error"
	CodeUnavailable            = "unavailable"
)

// isPipelineCode reports whether the pipeline may emit code for any operation, so that an
// operation need not declare it.
func isPipelineCode(code string) bool {
	switch code {
	case CodeInvalidParameter, CodeInvalidJSON, CodeInvalidBody, CodeUnsupportedMediaType,
		CodePayloadTooLarge, CodeUnauthorized, CodeForbidden, CodeNotFound, CodeMethodNotAllowed,
		CodeRateLimited, CodeInternalError, CodeUnavailable:
		return true
	}
	return false
}

// Problem is a failure a handler returns: a registered code and what the caller needs to
// repair the call. The code's status, category, severity, retryable and hint come from the
// registry; the fields set here are added to them. A code the registry does not hold is
// answered as internal_error (and logged), so that a typo cannot leak an unknown contract.
type Problem struct {
	Code    string
	Message string
	Issues  []remedy.Issue
	Schema  json.RawMessage
	// RetryAfter is how long the caller should wait before retrying (sent as retry_after_ms
	// and Retry-After).
	RetryAfter        time.Duration
	Hint              string // replaces the registry's hint when set
	Suggestions       []string
	NextOperation     string
	NextOperationArgs json.RawMessage
	CurrentStatus     string
	RequiredStatus    string
	// Header holds response headers to send with the failure (Allow, WWW-Authenticate, ...).
	Header map[string]string

	confirmationToken string // set by the confirmation gate only
	// made marks a refusal of the validate stage whose raw JSON members are the server's own:
	// its Schema is cut from a schema document that remedy's encoder keeps whole (see
	// validator.plain), and its issues' values were encoded by the validator. It is written
	// by encodeMade.
	made bool
}

// Error returns a Problem for a registered code.
func Error(code, message string) *Problem { return &Problem{Code: code, Message: message} }

// Precondition returns the state failure an agent can repair by running another operation
// first: 409 precondition_failed saying the resource's current status, the status the call
// needs, and the operation (with its arguments, which must marshal to a JSON object) that
// gets it there.
func Precondition(message, current, required, nextOperation string, nextArgs any) *Problem {
	p := &Problem{Code: CodePreconditionFailed, Message: message, CurrentStatus: current,
		RequiredStatus: required, NextOperation: nextOperation}
	if nextArgs != nil {
		if b, err := json.Marshal(nextArgs); err == nil && len(b) > 0 && b[0] == '{' {
			p.NextOperationArgs = b
		}
	}
	return p
}

// Error implements error.
func (p *Problem) Error() string {
	if p.Message == "" {
		return p.Code
	}
	return p.Code + ": " + p.Message
}

// envelope is the envelope for p, from its registered code.
func (p *Problem) envelope(c Code) *remedy.Envelope {
	env := c.Envelope(p.Message)
	p.fill(env)
	return env
}

// fill adds to env, made from p's code, what p says.
func (p *Problem) fill(env *remedy.Envelope) {
	env.Issues = p.Issues
	env.Schema = p.Schema
	if p.RetryAfter > 0 {
		env.RetryAfter = p.RetryAfter
	}
	if p.Hint != "" {
		env.Hint = p.Hint
	}
	env.Suggestions = p.Suggestions
	env.NextOperation = p.NextOperation
	env.NextOperationArgs = p.NextOperationArgs
	env.CurrentStatus = p.CurrentStatus
	env.RequiredStatus = p.RequiredStatus
	env.ConfirmationToken = p.confirmationToken
}

// asProblem is errors.As for a *Problem, without its cost (p escapes to the heap there) when
// err is one, as the pipeline's own errors are.
func asProblem(err error, p **Problem) bool {
	if direct, ok := err.(*Problem); ok && direct != nil {
		*p = direct
		return true
	}
	var wrapped *Problem
	if errors.As(err, &wrapped) {
		*p = wrapped
		return true
	}
	return false
}

func asEnvelope(err error, e **remedy.Envelope) bool { return errors.As(err, e) }
