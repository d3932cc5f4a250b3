package client

import (
	"context"
	"encoding/json"

	"github.com/remedy-go/remedy"
)

// Challenge is a server's request for confirmation before a dangerous operation runs: what
// would be executed, what the server said, and the token that approves exactly this payload.
//
// A challenge can also come as a question to the client's user (MCP elicitation, answered
// through remedy/mcp's ElicitationHandler): then Elicited is true, Token and Envelope are
// empty, and approving runs the call within the call that asked. Operation and Args are then
// those of the call this client has in flight that the question is about, from the client's
// own record; only when the client keeps no record of the session's calls (a session remedy/mcp
// does not call on) are they the server's words, and Unverified says so.
//
// The strings are exact, as sent or as the server wrote them: a policy that shows them to a
// person escapes what a terminal would not show as itself.
type Challenge struct {
	Operation  string           // the operation waiting for confirmation
	Args       json.RawMessage  // the exact payload the token is bound to
	Message    string           // the server's explanation
	Token      string           // the confirmation token to send back with the same payload
	Envelope   *remedy.Envelope // the whole challenge as the server sent it
	Elicited   bool             // the server asked the client's user (MCP elicitation), not the caller
	Unverified bool             // Elicited only: Operation and Args are the server's words, matched to no call of this client's
}

// ConfirmPolicy decides whether the loop may confirm an operation on the caller's behalf.
// Approving makes the loop send the byte-identical payload once more with the token;
// refusing (the default) ends the call with an error carrying the challenge, so that an agent
// or a person can decide and call again with the token. The policy is asked before the
// attempt that brought the challenge is reported, so that its record says what followed:
// ActConfirm when approved, ActStop with ErrConfirmationRequired when not.
type ConfirmPolicy interface {
	Approve(ctx context.Context, c *Challenge) (bool, error)
}

// ConfirmFunc adapts a function to a ConfirmPolicy.
type ConfirmFunc func(ctx context.Context, c *Challenge) (bool, error)

// Approve calls f.
func (f ConfirmFunc) Approve(ctx context.Context, c *Challenge) (bool, error) { return f(ctx, c) }

// RefuseAll is the default policy: nothing is confirmed on the caller's behalf. It is a
// constant, so that no part of a program can change what another part's default means.
const RefuseAll refuseAll = 0

// refuseAll is RefuseAll's type.
type refuseAll uint8

// Approve refuses.
func (refuseAll) Approve(context.Context, *Challenge) (bool, error) { return false, nil }
