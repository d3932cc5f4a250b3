package mcp

import (
	"bytes"
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
)

// approveField is the boolean a remedy server's confirmation question asks for
// (server.ApproveField).
const approveField = "approve"

// ElicitationHandler answers a remedy server's confirmation questions (MCP elicitation: an
// operation registered with server.Confirm or server.RequirePerson, called by a client that
// declares elicitation) through policy, the same ConfirmPolicy the loop asks about token
// challenges: the policy sees a client.Challenge with Elicited set, the operation (the tool
// name), the arguments, and the server's message, and decides for the person — by asking them
// (a prompt, a callback, a channel to a UI), never by itself unless that is what the embedding
// program means. Approved, the server runs the call within the call that asked; refused, it
// answers confirmation_declined; a policy error is sent as cancel (no answer:
// confirmation_required without a token). A nil policy refuses everything
// (client.RefuseAll). Any other elicitation is cancelled: the policy could not know what it
// answers.
//
// What the policy is shown comes from the request this client sends, never from the server's
// words. On a session a Transport calls on (NewClient's, NewTransport's), a question is
// answered only about a tool call the transport has in flight on that session: the call whose
// result brought the question (protocol 2026-07-28 and later), or else any call in flight on
// the session (a server's elicitation/create names no call); of those, the one call whose tool
// is the operation the question names and whose arguments are the ones it shows (the
// operation alone when the arguments were too long to show). The Challenge then carries that
// call's tool name and its arguments as the client sends them, without the confirmationToken
// and idempotencyKey the transport adds. A question that matches no such call (another
// operation, other arguments, an operation name this client never called, a call made on the
// session other than through a Transport) or several is cancelled without asking the policy —
// cancel, not decline: nobody was asked, so the server hears no answer (a remedy server
// answers confirmation_required, without a token, and runs nothing).
//
// On a session no Transport calls on, the handler keeps no record to check against: the
// Challenge carries the operation and the arguments the question's _meta names, with
// Unverified set to say that they are the server's words, and a policy that cannot trust the
// server should refuse it.
//
// The Challenge's strings are exact; a policy that shows them to a person escapes what a
// terminal would not show as itself (control characters, escape sequences, bidirectional
// controls).
//
// The go-sdk takes the handler before it connects, and declares the elicitation capability
// for it; give the same policy to the loop:
//
//	client := sdk.NewClient(impl, &sdk.ClientOptions{ElicitationHandler: mcp.ElicitationHandler(policy)})
//	session, err := client.Connect(ctx, transport, nil)
//	...
//	c, err := mcp.NewClient(ctx, session, client.WithConfirmPolicy(policy))
func ElicitationHandler(policy client.ConfirmPolicy) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	if policy == nil {
		policy = client.RefuseAll
	}
	return func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		ch, ok := confirmationOf(req)
		if ok {
			ch, ok = ownCall(ctx, req.Session, ch)
		}
		if !ok {
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
		approved, err := policy.Approve(ctx, ch)
		switch {
		case err != nil:
			return &sdk.ElicitResult{Action: "cancel"}, nil
		case approved:
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{approveField: true}}, nil
		}
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
}

// ownCall is the challenge about the call in flight on s that the server's question (asked,
// in the server's words) describes, made of the call's own tool name and arguments; false
// when the question describes no such call, or several. On a session of which the client
// keeps no record, it is asked, marked Unverified.
func ownCall(ctx context.Context, s *sdk.ClientSession, asked *client.Challenge) (*client.Challenge, bool) {
	calls, recorded := inFlight.about(ctx, s)
	if !recorded {
		asked.Unverified = true
		return asked, true
	}
	c := matching(calls, asked.Operation, asked.Args)
	if c == nil {
		return nil, false
	}
	return &client.Challenge{Operation: c.tool, Args: bytes.Clone(c.args), Message: asked.Message, Elicited: true}, true
}

// confirmationOf reads a remedy server's confirmation question: a form with the approve
// boolean, whose _meta names the operation and, unless they were too long to show, the
// arguments. The challenge holds the server's words.
func confirmationOf(req *sdk.ElicitRequest) (*client.Challenge, bool) {
	if req == nil || req.Params == nil || (req.Params.Mode != "" && req.Params.Mode != "form") {
		return nil, false
	}
	p := req.Params
	raw, err := json.Marshal(p.Meta[remedy.MetaConfirmation])
	if err != nil {
		return nil, false
	}
	var meta struct {
		Operation string          `json:"operation"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(raw, &meta) != nil || meta.Operation == "" {
		return nil, false
	}
	schema, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return nil, false
	}
	var form struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &form) != nil || len(form.Properties) != 1 || form.Properties[approveField].Type != "boolean" {
		return nil, false
	}
	return &client.Challenge{Operation: meta.Operation, Args: meta.Arguments, Message: p.Message, Elicited: true}, true
}
