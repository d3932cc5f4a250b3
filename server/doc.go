// Package server is the reference server of the remedy contract: typed operations whose
// every failure is an envelope an agent can act on — the field at fault and the rule it broke,
// whether a retry can succeed and when, the operation to run first.
//
// An API is an http.Handler. Operations are registered with Get, Post, Put, Patch and Delete
// from plain functions of a typed input; the input's JSON Schema comes from its Go type and
// validates every request before the handler runs. Requests pass through one pipeline, listed
// in API.pipeline in its order: route → authenticate → rate limit → read the body →
// idempotency → validate → confirmation → the handler, with every error mapped to an envelope
// from one Registry of codes.
//
// The same operations are served on two surfaces: REST, described by the OpenAPI 3.1 document
// at /openapi.json (API.OpenAPI), and MCP tools over streamable HTTP at /mcp (API.MCPServer),
// whose calls run through the same pipeline, stores and scopes.
package server
