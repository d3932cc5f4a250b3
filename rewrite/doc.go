// Package rewrite repairs a call's arguments when a failure names the fix: a [Rewriter] reads
// the failure's [remedy.Envelope] and the arguments ([Request]) and proposes new ones, each
// edit a [Change] that says whether it changes what the call means (lossy) and the rule that
// made it. [Default] makes the repairs that follow from the failure and the operation's schema
// alone — an enum value in the wrong case, "1200" → 1200, a field the server names moved
// where its schema puts it — and marks the ones that choose for the caller; a [Policy] ([Safe],
// the default, or [All]) decides whether a lossy [Proposal] is sent. [LLM] asks a model
// instead, [Func] and [Chain] compose rewriters. [Violations] checks arguments against a
// schema, as the loop does before sending them. Package client runs the rewriters in its loop.
package rewrite
