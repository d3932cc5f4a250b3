package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/tools"
)

// Client runs calls of a session's tools through a client.Loop. It is safe for concurrent
// use.
type Client struct {
	loop *client.Loop
	t    *Transport
	// origin is the key the server's calls are paced under (client.Call.Origin): "mcp:" and
	// the name the server gave in its initialize answer, so that clients sharing a pacer pace
	// their calls to one server together. "" (a server that gave no name) is not paced.
	origin string
}

// NewClient lists the session's tools and returns a client that runs them through a loop with
// the defaults every remedy entry point has (see client.Option), changed by opts. A failure's
// next_operation may run a tool the server listed, and nothing else (client.WithNextOperations
// with Only narrows them); a rate-limited tool call's stated wait holds the client's other
// calls to the server (client.WithPacer shares the pacer, or turns pacing off).
func NewClient(ctx context.Context, session *sdk.ClientSession, opts ...client.Option) (*Client, error) {
	t := NewTransport(session)
	loop, err := client.NewLoop(t, opts...)
	if err != nil {
		return nil, err
	}
	if _, err := t.Load(ctx); err != nil {
		return nil, err
	}
	if allow := loop.Registered; allow != nil {
		loop.Registered = func(name string) (ok, idempotent bool) {
			ok, idempotent = t.Registered(name)
			if a, _ := allow(name); !a {
				return false, false
			}
			return ok, idempotent
		}
	} else {
		loop.Registered = t.Registered
	}
	c := &Client{loop: loop, t: t}
	if init := session.InitializeResult(); init != nil && init.ServerInfo != nil && init.ServerInfo.Name != "" {
		c.origin = "mcp:" + init.ServerInfo.Name
	}
	return c, nil
}

// Transport is the client's transport.
func (c *Client) Transport() *Transport { return c.t }

// Call runs the tool with args (nil, a JSON object as json.RawMessage or []byte, or any value
// that encodes to one) through the loop, as client.Client.Call runs an HTTP operation: it
// returns the success (Body is the tool's result) or a *client.CallError saying why it
// stopped. The arguments are checked against the tool's input schema, as tools/list gave it,
// before the call is sent (see client.WithSchemaCheck).
//
// opts are the options of one call (client.WithIdempotencyKey, client.WithLimits, …), on top
// of the client's.
func (c *Client) Call(ctx context.Context, tool string, args any, opts ...client.Option) (*client.Response, error) {
	call, err := client.NewCall(tool, args)
	if err != nil {
		return nil, err
	}
	_, call.Idempotent = c.t.Registered(tool)
	call.Schema = c.t.argsSchema(tool)
	call.Origin = c.origin
	return c.loop.Do(ctx, call, opts...)
}

// Toolset offers the session's tools, as last listed, to a model (see tools.Toolset): their
// definitions for a vendor's function-calling API, and the model's tool calls run through
// this client's loop.
func (c *Client) Toolset(opts tools.Options) *tools.Toolset {
	return tools.New(c.t.Operations(), func(ctx context.Context, name string, args json.RawMessage) (*client.Response, error) {
		return c.Call(ctx, name, args)
	}, opts)
}

// Only approves the named tools, and no other, as a failure's next_operation, for
// client.WithNextOperations: mcp.NewClient(ctx, session, client.WithNextOperations(mcp.Only("add_item")))
// runs no other tool the server lists.
func Only(names ...string) func(name string) (ok, idempotent bool) {
	allowed := make(map[string]bool, len(names))
	for _, n := range names {
		allowed[n] = true
	}
	return func(name string) (bool, bool) { return allowed[name], false }
}
