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
//
// # Input types
//
// An operation's input type (a struct, or a pointer to one) gives the JSON Schema every request
// is validated against, draft 2020-12.
// The schema describes one JSON object: the request body's members, with the URL parameters
// beside them under their URL names (the binder is expected to put each parameter's value
// there, typed as its field: "limit": 20, not "20"). It starts from [jsonschema.ForType], so a
// body field is named by its json tag as encoding/json names it, `json:"-"` leaves it out,
// omitempty or omitzero makes it optional and every other field is required; no other member is
// allowed (additionalProperties is false). Beyond ForType:
//
//   - A type whose pointer implements json.Unmarshaler accepts any JSON value (its own decoder
//     decides); one that implements encoding.TextUnmarshaler is a string; time.Time is a
//     string in date-time format; a byte slice is a base64 string, as encoding/json has it.
//   - `path:"id"` and `query:"limit"` tags make a top-level field (or one promoted from an
//     embedded struct) a URL parameter, named by the tag. A path parameter is always required.
//     A query parameter is required unless its field is a pointer or a slice, or its tag says
//     omitempty (`query:"limit,omitempty"`); a default does not make it optional. A parameter
//     is a string, bool, integer or float, or a pointer to one; a query parameter may also be
//     a slice of those. Its json tag is ignored; tag it `json:"-"` when the body must not set it.
//   - `doc:"..."` is a field's description (as google's `jsonschema:"..."` tag is; use one).
//   - `schema:"..."` adds constraints, described below.
//
// # The schema tag
//
// A schema tag is a list of key=value items separated by semicolons:
//
//	Currency string   `json:"currency" schema:"enum=usd,eur,gbp;default=usd"`
//	Quantity int      `json:"quantity" schema:"minimum=1;maximum=100"`
//	Tags     []string `json:"tags,omitempty" schema:"maxItems=5;uniqueItems;pattern=^[a-z]+$"`
//
// A backslash escapes the semicolon that follows it (`pattern=^a\;b$`) and, inside an enum, a
// comma; every other backslash is kept as written, so regular expressions need no doubling.
// Keys and values are trimmed of surrounding white space: a value cannot begin or end with a
// space. A key may appear once per tag.
//
// Keys that constrain a value: enum (a comma-separated list) and const, typed by the field (a
// number for a numeric field, true or false for a boolean, the text itself for a string);
// minimum, maximum, exclusiveMinimum, exclusiveMaximum and multipleOf for numbers; minLength,
// maxLength, pattern (Go regexp syntax, unanchored as JSON Schema has it) and format (date-time,
// date, time, duration, email, hostname, ipv4, ipv6, uri, uri-reference, iri, iri-reference,
// uri-template, uuid, json-pointer, relative-json-pointer, regex, period, semver) for strings.
// On a slice or array field these apply to its items.
//
// Keys that constrain the field itself: minItems, maxItems and uniqueItems (alone or =true) for
// a slice; minItems of 1 or more also refuses null, which encoding/json would read as an empty
// slice. default and example give a value of the field: typed as above for a string, number or
// boolean field, JSON for any other (`default=["a"]`). A missing required field's default is
// what the validator suggests; a default does not make a field optional.
//
// Enum and const restrict a pointer field too: null is then refused (leave the field out
// instead). Every value a tag names (enum members, const, default, example) must satisfy the
// field's other constraints.
//
// Any mistake — an unknown key, a value that does not parse, a pattern that does not compile, a
// constraint that does not apply to the field's type (enum on a struct), bounds that no value
// satisfies — makes the registration (Get, Post, …) fail with an error naming the input type,
// the field and the key, and, when the tag looks written with another separator, this grammar.
// Registration never panics.
package server
