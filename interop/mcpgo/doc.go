// Package mcpgo tests remedy against mcp-go (github.com/mark3labs/mcp-go), the other widely
// used Go MCP library: its client against remedy's reference server, and remedy's client
// against its server. It is a module of its own so that mcp-go stays out of remedy's go.mod.
package mcpgo
