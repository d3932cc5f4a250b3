package client

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/rewrite"
)

// SchemaCheck says what the loop does, before a call's first attempt, with arguments that
// break the call's Schema (an Operation's Parameters, an MCP tool's input schema).
//
// The arguments are validated with santhosh-tekuri/jsonschema, the validator the reference
// server uses, the schema read as draft 2020-12 (or the draft its $schema names) and as
// OpenAPI 3.0 means it (nullable, boolean exclusiveMinimum and exclusiveMaximum); formats are
// notes, not rules, and nothing outside the schema is ever loaded. When the loop has a
// Rewriter, the violations are given to rewrite.Default (whatever the loop's Rewriter is:
// before the server has spoken, only what the schema states is repaired, and no model is asked
// about a failure no server sent) as a failure — Rewrite.Attempt 0, an Envelope of Code
// "invalid_arguments", Category validation, Status 0 and no Dialect, whose Issues are written
// as the reference server writes its own — with the schema in rewrite.Request.Schema. What it repairs
// is recorded in the first attempt's Attempt.Checked, and the repaired arguments get an
// idempotency key of their own (derived from the caller's, when the caller gave one, as after
// a rewrite). A call that carries a confirmation token is not checked: the server challenged
// those very arguments. A schema the client cannot use (not JSON, not a schema, a reference
// outside itself, over 256 KiB or 128 levels deep) checks nothing: the Logger says why, at
// debug level, and the call goes as it would without it.
type SchemaCheck uint8

const (
	// CheckRepair, the default, repairs arguments that break the schema before anything is
	// sent, when rewrite.Default repairs every violation without changing what the call means
	// (a lossy repair is put to the rewrite.Policy, as after a failure); arguments it cannot
	// so repair are sent as they are, and the server's answer decides: a published schema may
	// be older than the server it describes, and a call the server would accept is not
	// refused on the schema's word alone.
	CheckRepair SchemaCheck = iota
	// CheckStrict repairs as CheckRepair does, and stops the call before sending arguments
	// that still break the schema, with ErrInvalidArguments, the violations (CallError.Err is
	// an *ArgumentsError), and the refused proposal or the issues no rule could address.
	CheckStrict
	// CheckOff sends the arguments unchecked; the schema still helps the Rewriter after a
	// failure.
	CheckOff
)

var schemaCheckNames = [...]string{"repair", "strict", "off"}

// String is the check's name: "repair", "strict" or "off".
func (s SchemaCheck) String() string {
	if int(s) < len(schemaCheckNames) {
		return schemaCheckNames[s]
	}
	return "check(" + strconv.Itoa(int(s)) + ")"
}

// checkCode is the Code of the failure the check before sending gives rewrite.Default: an
// Envelope no server sent (Status 0, Dialect ""), whose Issues are the schema's violations.
const checkCode = "invalid_arguments"

// check validates the caller's arguments against the call's Schema before the first attempt,
// and has rewrite.Default repair what breaks it, as after a failure: a repair with no lossy change
// is applied; a lossy one only when the rewrite.Policy approves. It returns the arguments to
// send and the changes made (args as given, and nil, when the arguments are valid, the schema
// is unusable, or there is no repair to make); under CheckStrict, arguments that still break
// the schema are the call's error instead, and nothing is sent.
//
// A schema that does not compile (not JSON, a reference outside itself, a number beyond the
// validator's bounds, larger than 256 KiB) and arguments over 1 MiB are not checked: the call
// goes as it would without a schema, and the Logger says why at debug level.
func (r *run) check(ctx context.Context, c *Call) (json.RawMessage, []rewrite.Change, *CallError) {
	l := r.loop
	issues := r.violations(ctx, c, c.Args)
	if len(issues) == 0 {
		return c.Args, nil, nil
	}
	env := &remedy.Envelope{Code: checkCode, Category: remedy.CategoryValidation, Severity: remedy.SeverityError,
		Message: "the arguments break the operation's schema", Issues: issues}
	var (
		prop    *rewrite.Proposal
		blocked []rewrite.Blocked
		why     = "no rewriter is configured"
	)
	if l.Rewriter != nil {
		args := c.Args
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		// rewrite.Default, whatever the loop's Rewriter: before the server has spoken, only
		// what the schema states is repaired, and no model is asked about a failure no
		// server sent.
		o := r.repair(ctx, rewrite.Default, &rewrite.Request{Operation: c.Operation, Args: args, Envelope: env, Schema: c.Schema})
		prop, blocked, why = o.prop, o.blocked, o.why
		if o.next != nil {
			if l.Check != CheckStrict {
				return o.next, o.changes, nil
			}
			left := r.violations(ctx, c, o.next)
			if len(left) == 0 {
				return o.next, o.changes, nil
			}
			issues, why = left, "the repaired arguments still break the schema"
		}
	}
	if l.Check != CheckStrict {
		return c.Args, nil, nil // the server decides: its schema may be newer than the one we hold
	}
	return nil, nil, &CallError{Operation: c.Operation, Cause: ErrInvalidArguments,
		Detail:   "the arguments break the operation's schema, and " + why + "; nothing was sent",
		Attempts: r.attempts, Err: &ArgumentsError{Issues: issues}, Proposal: prop, Blocked: blocked}
}

// violations are the issues of args against c.Schema; none when they are valid, or when they
// are not checked (see Violations), which the Logger is told.
func (r *run) violations(ctx context.Context, c *Call, args json.RawMessage) []remedy.Issue {
	issues, why := rewrite.Violations(c.Schema, args)
	if why != "" {
		r.unchecked(ctx, c, why)
	}
	return issues
}

// unchecked logs why the call's arguments were not checked against its schema.
func (r *run) unchecked(ctx context.Context, c *Call, why string) {
	if lg := r.loop.Logger; lg != nil {
		lg.LogAttrs(ctx, slog.LevelDebug, "remedy arguments not checked",
			slog.String("operation", c.Operation), slog.String("why", why))
	}
}
