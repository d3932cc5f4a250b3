package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remedy-go/remedy"
)

// Client runs calls of a session's tools through a remedy.Loop. It is safe for concurrent
// use.
type Client struct {
	loop remedy.Loop
	t    *Transport
	// origin is the key the server's calls are paced under (remedy.Call.Origin): "mcp:" and
	// the name the server gave in its initialize answer, so that clients sharing a pacer pace
	// their calls to one server together. "" (a server that gave no name) is not paced.
	origin string
}

// NewClient lists the session's tools and returns a client that runs them through loop: its
// Rewriter, ConfirmPolicy, Limits, Budget and hooks as given, its Transport set to a
// Transport over the session, its Registered, when nil, to the tools the server listed
// (a failure's next_operation runs one of them, and nothing else), and its Pacer, when nil, to
// a remedy.MemoryPacer of its own: a rate-limited tool call's stated wait holds the client's
// other calls to the server (remedy.Unpaced turns pacing off).
func NewClient(ctx context.Context, session *sdk.ClientSession, loop remedy.Loop) (*Client, error) {
	t := NewTransport(session)
	if _, err := t.Load(ctx); err != nil {
		return nil, err
	}
	loop.Transport = t
	if loop.Registered == nil {
		loop.Registered = t.Registered
	}
	if loop.Pacer == nil {
		loop.Pacer = remedy.NewPacer()
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
// that encodes to one) through the loop, as remedy.Client.Call runs an HTTP operation: it
// returns the success (Body is the tool's result) or a *remedy.CallError saying why it
// stopped. The arguments are checked against the tool's input schema, as tools/list gave it,
// before the call is sent (see remedy.Loop.Check).
func (c *Client) Call(ctx context.Context, tool string, args any, opts ...remedy.CallOption) (*remedy.Response, error) {
	call, err := remedy.NewCall(tool, args, opts...)
	if err != nil {
		return nil, err
	}
	_, call.Idempotent = c.t.Registered(tool)
	call.Schema = c.t.argsSchema(tool)
	call.Origin = c.origin
	return c.loop.Do(ctx, call)
}

// Toolset offers the session's tools, as last listed, to a model (see remedy.Toolset): their
// definitions for a vendor's function-calling API, and the model's tool calls run through
// this client's loop.
func (c *Client) Toolset(opts remedy.ToolOptions) *remedy.Toolset {
	return remedy.NewToolset(c.t.Operations(), func(ctx context.Context, name string, args json.RawMessage) (*remedy.Response, error) {
		return c.Call(ctx, name, args)
	}, opts)
}

// Only approves the named tools, and no other, as a failure's next_operation: a
// remedy.Loop.Registered narrower than every tool the server lists.
func Only(names ...string) func(name string) (ok, idempotent bool) {
	allowed := make(map[string]bool, len(names))
	for _, n := range names {
		allowed[n] = true
	}
	return func(name string) (bool, bool) { return allowed[name], false }
}
