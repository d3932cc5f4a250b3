package server

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Emits lists every code a call of op may be answered with on this API, sorted by status and
// then by code: the codes op declared (with those its options add), and the pipeline's own
// that apply to it — validation always, authentication when the API has an Authenticator,
// rate limiting when it limits rates, unavailable when op depends on a store, internal_error
// always. Routing codes (not_found, method_not_allowed) belong to no operation. It is what
// the OpenAPI document's x-agent-error-codes and the MCP tools' error blocks list.
func (a *API) Emits(op *Operation) []Code {
	names := []string{CodeInvalidJSON, CodeInvalidBody, CodeUnsupportedMediaType, CodePayloadTooLarge, CodeInternalError}
	if len(op.params) > 0 {
		names = append(names, CodeInvalidParameter)
	}
	if a.auth != nil {
		names = append(names, CodeUnauthorized, CodeForbidden)
	}
	if a.limiter != nil {
		names = append(names, CodeRateLimited)
	}
	if op.Confirm || op.Idempotency != IdempotencyOff {
		names = append(names, CodeUnavailable)
	}
	names = appendNew(names, op.codes...)
	codes := make([]Code, 0, len(names))
	for _, n := range names {
		if c, ok := a.reg.Lookup(n); ok {
			codes = append(codes, c)
		}
	}
	slices.SortFunc(codes, func(x, y Code) int {
		return cmp.Or(cmp.Compare(x.Status, y.Status), strings.Compare(x.Code, y.Code))
	})
	return codes
}

// codeNames are the codes' names, in their order.
func codeNames(codes []Code) []string {
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = c.Code
	}
	return names
}

// catalogLine is one code as an agent reads it before calling: "`rate_limited` (429,
// retryable): Wait retry_after_ms, then retry unchanged."
func catalogLine(c Code) string {
	retry := "not retryable"
	if c.Retryable {
		retry = "retryable"
	}
	line := fmt.Sprintf("`%s` (%d, %s)", c.Code, c.Status, retry)
	if c.Hint != "" {
		line += ": " + c.Hint
	}
	return line
}

// protocolNotes explains, in words an agent can follow, what op asks of a call beyond its
// arguments: the confirmation handshake and the idempotency key. surface names where the
// token and the key go ("the X-Confirmation-Token header" or "the confirmationToken
// argument"): tokenAt and keyAt.
func (a *API) protocolNotes(op *Operation, tokenAt, keyAt string) string {
	var b strings.Builder
	switch {
	case op.Person:
		b.WriteString("A person must confirm: called over MCP from a client that declares elicitation, the server asks the client's user to approve the exact arguments, " +
			"and runs the call once they do; declined is 409 confirmation_declined, and nothing is done. No token confirms it: " +
			"any other call (REST, an MCP client without elicitation) is answered 403 person_required, and nothing is done.")
	case op.Confirm:
		b.WriteString("Over MCP, a client that declares elicitation gets no token: the server asks its user to approve the exact arguments, runs the call once they do, " +
			"and answers 409 confirmation_declined when they decline. Otherwise: ")
	}
	if op.Confirm && !op.Person {
		fmt.Fprintf(&b, "Confirmation required: a call without a token is answered 409 confirmation_required, and nothing is done. "+
			"The envelope's confirmationToken is single-use, bound to the caller, this operation and the exact arguments, "+
			"and expires after %s. If the user approves, send the identical call again with the token in %s. "+
			"A token that is spent, expired or used with other arguments is answered 409 confirmation_invalid: call again without it for a new one.",
			fmtDuration(a.confirmTTL()), tokenAt)
	}
	if op.Idempotency != IdempotencyOff {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		need := "Send"
		if op.Idempotency == IdempotencyRequired {
			need = "Required: send"
		}
		fmt.Fprintf(&b, "Idempotent: %s one unique key per logical call in %s (1 to 255 printable ASCII characters) and reuse it for every retry of that call: "+
			"a retry of a completed call returns the stored result without running again, one arriving while it runs waits for it "+
			"(409 idempotency_in_flight if it takes too long), and the same key with other arguments is refused (422 idempotency_key_reused). "+
			"Failures are not stored: a retry after one runs again.",
			need, keyAt)
	}
	if op.Async {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(asyncNote)
	}
	return b.String()
}

// confirmTTL is the token lifetime the API will use (its default before setup has run).
func (a *API) confirmTTL() time.Duration { return cmp.Or(max(a.confirm.TTL, 0), DefaultConfirmTTL) }

// fmtDuration writes a duration the way people do: "5 minutes", "90 seconds".
func fmtDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0 && d >= time.Hour:
		return plural(int64(d/time.Hour), "hour")
	case d%time.Minute == 0 && d >= time.Minute:
		return plural(int64(d/time.Minute), "minute")
	case d%time.Second == 0:
		return plural(int64(d/time.Second), "second")
	}
	return d.String()
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
