package remedy

import (
	"net/http"
	"strings"

	"github.com/remedy-go/remedy/internal/httpop"
)

// The names both sides of the contract use on the wire: headers over HTTP, arguments and _meta
// keys over MCP.

// Headers of the contract: the client sends the idempotency key and the confirmation token,
// and the server says a result is a replay.
const (
	HeaderIdempotencyKey    = "Idempotency-Key"
	HeaderConfirmationToken = "X-Confirmation-Token"
	HeaderReplayed          = "Idempotency-Replayed" // read in other spellings too: see Replayed
)

// Over MCP, where a tool call has no headers, the confirmation token and the idempotency key
// are arguments of the call, and a replayed result says so in its _meta.
const (
	ArgConfirmationToken = "confirmationToken"
	ArgIdempotencyKey    = "idempotencyKey"
	MetaReplayed         = "remedy/replayed"
)

// MetaConfirmation is the _meta key of an MCP elicitation request that asks to confirm a call
// (sent by remedy's server, read by remedy/mcp's ElicitationHandler): an object with the
// operation (the tool name) and, unless they were too long to show, the arguments.
const MetaConfirmation = "remedy/confirmation"

// HeaderOperationLocation names the status resource of an accepted operation (Azure's
// long-running operations); Location is read when it is absent.
const HeaderOperationLocation = "Operation-Location"

// Replayed reports whether an answer says it is the stored result of an earlier request with
// the same idempotency key, not a new execution: Idempotency-Replayed: true, in any of the
// spellings APIs use (Stripe's Idempotent-Replayed, and the X- forms of both; true, or ?1).
func Replayed(h http.Header) bool {
	for _, name := range replayedHeaders {
		if replayTrue(httpop.Header(h, name)) {
			return true
		}
	}
	return false
}

// replayTrue reports whether a replay header's value says replayed: true, or a structured ?1.
func replayTrue(v string) bool {
	v = strings.TrimSpace(v)
	return strings.EqualFold(v, "true") || v == "?1"
}

// replayedHeaders are the spellings of HeaderReplayed, canonical.
var replayedHeaders = [...]string{HeaderReplayed, "Idempotent-Replayed", "X-Idempotency-Replayed", "X-Idempotent-Replayed"}
