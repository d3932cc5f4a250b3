package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
)

// approveField is the boolean a remedy server's confirmation question asks for
// (server.ApproveField).
const approveField = "approve"

// ElicitationHandler answers a remedy server's confirmation questions (MCP elicitation: an
// operation registered with server.Confirm or server.RequirePerson, called by a client that
// declares elicitation) through policy, the same ConfirmPolicy the loop asks about token
// challenges: the policy sees a remedy.Challenge with Elicited set, the operation (the tool
// name), the arguments as the server will run them, and the server's message, and decides for
// the person — by asking them (a prompt, a callback, a channel to a UI), never by itself
// unless that is what the embedding program means. Approved, the server runs the call within
// the call that asked; refused, it answers confirmation_declined; a policy error is sent as
// cancel (no answer: confirmation_required without a token). A nil policy refuses
// everything (remedy.RefuseAll). Any other elicitation is cancelled: the policy could not know
// what it answers.
//
// The go-sdk takes the handler before it connects, and declares the elicitation capability
// for it; give the same policy to the loop:
//
//	client := sdk.NewClient(impl, &sdk.ClientOptions{ElicitationHandler: mcp.ElicitationHandler(policy)})
//	session, err := client.Connect(ctx, transport, nil)
//	...
//	c, err := mcp.NewClient(ctx, session, remedy.Loop{Confirm: policy})
func ElicitationHandler(policy remedy.ConfirmPolicy) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	if policy == nil {
		policy = remedy.RefuseAll
	}
	return func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		ch, ok := confirmationOf(req)
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

// confirmationOf reads a remedy server's confirmation question: a form with the approve
// boolean, whose _meta names the operation and, unless they were too long to show, the
// arguments.
func confirmationOf(req *sdk.ElicitRequest) (*remedy.Challenge, bool) {
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
	return &remedy.Challenge{Operation: meta.Operation, Args: meta.Arguments, Message: p.Message, Elicited: true}, true
}
