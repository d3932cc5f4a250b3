// Package client calls APIs through remedy's bounded try → rewrite → retry loop, reading every
// failure as the contract's [remedy.Envelope].
//
// [New] with the operations it may call ([WithOperations], or [Client.LoadOpenAPI]) runs each
// [Client.Call] through the loop: transient failures retried when and as the server says, and
// paced to what it said across calls ([Pacer]); repairs made by a [rewrite.Rewriter] within a
// [rewrite.Policy]; confirmations decided by a [ConfirmPolicy]; the prerequisite
// next_operation run only when registered; idempotency keys attached so that no retry executes
// twice. A call that does not succeed ends with a [*CallError] that says why ([ErrNotRetryable],
// [ErrConfirmationRequired], [ErrOutcomeUnknown], …) and what is known, whether the request
// may have run included.
//
// [NewLoop] is the same engine for any other transport (package mcp uses it for MCP tool
// calls), and [NewRoundTripper] gives an *http.Client the loop's retries without changing its
// call sites. One [Option] type configures every entry point and each call, and every entry
// point starts from the same defaults (listed at Option). [Decide] is the pure function that
// picks each next step; its doc lists the rules in order. Package tools (tools.ForClient) offers the
// operations to a model as tools and runs the model's calls.
package client
