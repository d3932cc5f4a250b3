// Package tools offers the operations a remedy client knows to a model as tools — OpenAI,
// Anthropic and Gemini function definitions, langchaingo's and eino's tool interfaces — and
// runs the model's tool calls through the client's loop ([ForClient]; [New] for any other way
// to call, as package mcp's Client.Toolset). What the model reads after a call that did not
// succeed follows from why the loop stopped, one row per cause, and never holds a confirmation
// token or an idempotency key: text that leaves remedy approves nothing.
package tools
