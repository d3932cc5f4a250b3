package conformance

// The rules Run checks, in the order it reports them. Their IDs are stable: a server's own
// tests and CI configurations refer to them.
var rules = []Rule{
	{ID: "openapi", Statement: "The server publishes an OpenAPI 3.x document listing its operations."},
	{ID: "openapi-error-codes", Statement: "Every operation lists the error codes it may return (x-agent-error-codes), and every code it returns is listed."},
	{ID: "envelope", Statement: "Every error response is an envelope that parses and carries a machine code."},
	{ID: "retryable-stated", Statement: "Every error says in its body whether the same request can succeed later (retryable): false when it names fields to fix."},
	{ID: "invalid-input-refused", Statement: "Invalid input is refused with a 4xx: not executed (2xx), not a server error (5xx)."},
	{ID: "issues-point-at-fields", Statement: "Validation errors carry issues whose paths point at the offending fields of the request."},
	{ID: "schema-inline", Statement: "Validation errors inline the violated schema, so the caller needs no second lookup."},
	{ID: "no-internal-detail", Statement: "No error body carries a stack trace, a file path or an internal message."},
	{ID: "trace-id", Statement: "Server errors (5xx) carry a trace id to report them by."},
	{ID: "rate-limit-wait", Statement: "Rate limits and unavailability (429, 503) say how long to wait."},
	{ID: "unknown-route", Statement: "An unknown route is answered with a 404 envelope, not an HTML page."},
	{ID: "confirmation-bound", Statement: "A confirmation token is bound to its payload: sent with another payload, it is refused."},
	{ID: "confirmation-single-use", Statement: "A confirmation token confirms one call: sent again, it is refused."},
	{ID: "idempotent-replay", Statement: "A retry with the same Idempotency-Key gets the first result, identical and marked Idempotency-Replayed."},
	{ID: "idempotency-key-reuse", Statement: "The same Idempotency-Key with another payload is refused."},
	{ID: "idempotency-errors-not-stored", Statement: "A failure is not stored under its Idempotency-Key: the key, sent with a corrected payload, executes."},
}

// Rules lists the rules Run checks, in the order of its report.
func Rules() []Rule { return append([]Rule(nil), rules...) }
