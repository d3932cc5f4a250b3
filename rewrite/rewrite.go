package rewrite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/tape"
)

// Rewriter repairs a call's arguments from the envelope that refused them. It returns the new
// arguments (a JSON object), or nil to give up: the loop then stops with ErrRewriteGaveUp.
// An error also gives up, and is kept in the call's error.
type Rewriter interface {
	Rewrite(ctx context.Context, r *Request) (json.RawMessage, error)
}

// Rewrite is what a Rewriter is asked to repair. It is a struct so that fields can be added.
type Request struct {
	Operation string           // the operation the arguments are for
	Args      json.RawMessage  // the arguments as sent, a JSON object
	Envelope  *remedy.Envelope // the failure that names what to change
	Attempt   int              // the attempt that failed, from 1

	// Changes is the rewriter's account of what it changed, one entry per path, filled by
	// the rewriter (Default sets it on every call: its edits when it returns
	// arguments, nil when it gives up). A change marked Lossy makes the repair a proposal
	// that the loop's Policy must approve. When a rewriter leaves it empty, the loop
	// lists the changes itself by comparing the arguments, with Rule "rewriter" and Lossy
	// false: a rewriter the caller configured speaks for the caller.
	Changes []Change

	// Schema is the JSON Schema of the operation's arguments (Call.Schema: an Operation's
	// Parameters, an MCP tool's input schema), rooted at Args; nil when the client does not
	// know it. A rewriter may read the facts the failure leaves out from it.
	Schema json.RawMessage

	// Blocked is the rewriter's account of why it gave up: each issue it could not address,
	// and why. Default sets it whenever it returns nil, and clears it otherwise; the
	// loop passes it on in CallError.Blocked.
	Blocked []Blocked
}

// Blocked is an issue a rewriter could not address, and why: "no allowed value or type is
// known", "the path matches several properties of the schema".
type Blocked struct {
	Path  string `json:"path"`            // the JSON Pointer, "" when it named none
	Field string `json:"field,omitempty"` // the field as the server wrote it, when it gave no path
	Code  string `json:"code,omitempty"`  // the code
	Why   string `json:"why"`
}

// Change is one edit of a call's arguments, as Attempt.Changes and Proposal.Changes list it.
type Change struct {
	Path string          `json:"path"`          // JSON Pointer of the value changed
	Old  json.RawMessage `json:"old,omitempty"` // the value before; nil when it was added
	New  json.RawMessage `json:"new,omitempty"` // the value after; nil when it was removed
	// Rule names what decided the change: suggested_value, only_allowed_value, enum_match,
	// coerce, default, example, choose_allowed, clamp, truncate, drop_unknown, or rewriter
	// (a rewriter that does not describe its changes).
	Rule string `json:"rule"`
	// Lossy says the change may alter what the call means (clamping a number to a bound,
	// cutting a string, dropping a member, choosing one of several values, taking an
	// example's value): it is applied only when the Policy approves.
	Lossy bool `json:"lossy,omitempty"`
	// Why is the server's complaint the change answers, in words.
	Why string `json:"why,omitempty"`
}

// Proposal is a repair that changes what a call means, put to the Policy: the
// arguments as sent, the arguments proposed, and every change between them.
type Proposal struct {
	Operation string
	Args      json.RawMessage  // the arguments as sent
	New       json.RawMessage  // the arguments the rewriter proposes
	Changes   []Change         // every change, the lossy ones marked
	Envelope  *remedy.Envelope // the failure the repair answers
}

// Policy decides whether the loop may send a repair that changes what a call means.
// Lossless repairs (the server's suggested value, the only allowed value, an exact type
// coercion, an enum value matched regardless of case) are sent without asking. The default,
// Safe, refuses every lossy one: the call stops with ErrRewriteRefused and the
// proposal, so that a person or a model can decide and call again.
type Policy interface {
	Approve(ctx context.Context, p *Proposal) (bool, error)
}

// PolicyFunc adapts a function to a Policy.
type PolicyFunc func(ctx context.Context, p *Proposal) (bool, error)

// Approve calls f.
func (f PolicyFunc) Approve(ctx context.Context, p *Proposal) (bool, error) { return f(ctx, p) }

// The two policies every program may name. They are constants, so that no part of a program
// can change what another part's policy means.
const (
	// Safe is the default policy: lossless repairs only; every lossy proposal is
	// refused.
	Safe approveAll = false
	// All approves every proposal: the rewriter's repairs are sent whatever they
	// change.
	All approveAll = true
)

// approveAll is the type of Safe and All: a policy that approves every
// proposal or none.
type approveAll bool

// Approve answers p's value.
func (p approveAll) Approve(context.Context, *Proposal) (bool, error) { return bool(p), nil }

// Func adapts a function to a Rewriter.
type Func func(ctx context.Context, r *Request) (json.RawMessage, error)

// Rewrite calls f.
func (f Func) Rewrite(ctx context.Context, r *Request) (json.RawMessage, error) {
	return f(ctx, r)
}

// Chain tries each rewriter in turn and returns the first repair that keeps what the call
// means; an error stops the chain. A repair with a lossy change (a proposal for the
// Policy) is kept while the rest are tried, and returned, with its changes, only when
// none of them repairs the arguments: Chain(Default, LLM(...)) asks the model
// before it proposes a clamp. Each rewriter starts with no Changes and no Blocked. When every
// rewriter gives up, Blocked is the account of the first that gave one: the deterministic
// rewriter that usually comes first says which facts were missing, where a model's silence
// says nothing. A repair returned leaves Blocked nil.
func Chain(rs ...Rewriter) Rewriter {
	return Func(func(ctx context.Context, r *Request) (json.RawMessage, error) {
		var proposal json.RawMessage
		var proposed []Change
		var blocked []Blocked
		for _, rw := range rs {
			if rw == nil {
				continue
			}
			r.Changes, r.Blocked = nil, nil
			out, err := rw.Rewrite(ctx, r)
			switch {
			case err != nil:
				return out, err
			case out == nil:
				if blocked == nil {
					blocked = r.Blocked
				}
				continue
			case !AnyLossy(r.Changes):
				r.Blocked = nil
				return out, nil
			case proposal == nil:
				proposal, proposed = out, r.Changes
			}
		}
		r.Changes, r.Blocked = proposed, nil
		if proposal == nil {
			r.Blocked = blocked
		}
		return proposal, nil
	})
}

// anyLossy reports whether one of the changes is lossy.
func AnyLossy(changes []Change) bool {
	for i := range changes {
		if changes[i].Lossy {
			return true
		}
	}
	return false
}

// Default repairs arguments deterministically, from what the envelope states, without
// a model, and lists each edit in Request.Changes with the rule that made it.
//
// Issues with the same Path are one problem, repaired once: the first SuggestedValue, the
// first non-empty AllowedValues, every Expected, code and message of them all are read
// together. Each path is repaired by the first of these rules that changes the arguments,
// every lossless rule before any lossy one:
//
// Lossless, applied by the loop without asking:
//
//  1. suggested_value: the SuggestedValue is set at the path — lossy, though, when it puts
//     another number in place of the caller's (a bound the server enforces is not the amount
//     the caller meant);
//  2. only_allowed_value: the one allowed value is set;
//  3. enum_match: a string that matches exactly one allowed string when case and surrounding
//     space are ignored becomes that value ("EUR" to "eur", " usd " to "usd"); a string that
//     matches two ("Eur" when "eur" and "EUR" are allowed) matches none;
//  4. coerce: a value of the wrong type is converted when nothing is lost: "1200" to 1200 for
//     integer or number, "true" to true for boolean, 5 or true to a string for string, 5.0 to
//     5 for integer (and, when allowed values are known, only onto one of them);
//  5. default: a missing value (a code such as required, missing, missing_field or
//     parameter_missing, or simply absent from the arguments, or null for a required code) is
//     set to its schema default.
//
// Lossy, proposals that the loop's Policy must approve (Change.Lossy):
//
//  6. drop_unknown: a property refused as unknown (additional_properties, unknown_field,
//     unknown_parameter, unrecognized_keys, extra_forbidden, in any spelling) is deleted: the
//     property at the path, or, when the path holds an object and the messages quote names it
//     contains, those names;
//  7. clamp: a number outside the schema's minimum/maximum is moved onto the bound it
//     violated (exclusive bounds one past it, for integers); truncate: a string over
//     maxLength is cut to maxLength characters;
//  8. example: the value the envelope's ExampleRequest holds at the path is set (an example
//     of a whole HTTP request, {"method", "path", "body"}, is read from its body), unless
//     allowed values are known and it is none of them;
//  9. choose_allowed: a value that is none of several allowed values (and matches none by
//     rule 3) becomes the schema's default when that is allowed, else the first allowed value.
//     A missing or null value gets no choice.
//
// Allowed values, bounds, type and default come from the issues (AllowedValues; Expected as a
// bare type name such as "integer", or as a schema object), else from the envelope's inline
// Schema, where the field is found through properties by key and items by index, from the
// root or from the object holding the field (the longest suffix of the path first); a Schema
// without properties belongs to the field when the issues name one path; else from the
// operation's schema, Request.Schema, navigated from its root (the pointer /lines/0/qty is
// properties.lines.items.properties.qty), its local $refs resolved in it. From a schema it
// reads enum (const is a single allowed value), minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, maxLength, type and default; it follows local $ref, allOf, and the one
// branch of an anyOf or oneOf that is not null; a union of several kinds of value says
// nothing, except a union of enums and consts, which allows their values. OpenAPI 3.0's
// boolean exclusiveMaximum beside maximum is read as draft 4 writes it; nullable changes
// nothing (a repair never aims at null). The server's facts win wherever both speak: the
// operation's schema completes each kind of fact the server left out (the allowed values,
// the type, the lower bound, the upper bound, maxLength, default) and never overrides one it
// stated, since a published schema may be older than the server. A clamp or truncation to a
// bound only the operation's schema states says it in Change.Why ("the schema allows at most
// 100").
//
// With Request.Schema, what a failure names in another form is mapped onto the schema before
// the issues are merged, so that two issues naming one field in two forms are one problem:
//
//   - a Path that neither the schema nor the arguments hold as written: each name is matched
//     to the property spelled the same when case, "_", "-" and spaces are ignored
//     ("/Quantity" to "/quantity", "/unit_price" to "/unitPrice"), an exact spelling winning,
//     and a leading "body", "query", "querystring", "path", "params" or "form" that names no
//     property is dropped ("/body/quantity" to "/quantity");
//   - a Field (a Go validator's "Lines[1].SKU", a decoder's "lines.quantity"), read from the
//     root of the arguments the same way, except that a spelling matching two properties
//     ("Color" when both "Color" and "color" are declared) matches none; a leading name in
//     upper case that names no property is dropped, as the Go type's name it is
//     ("CreateItem.Lines[1].SKU");
//   - a name where the schema holds an array (the index left out: "lines.quantity") goes into
//     the element the arguments make certain: the only one, or the only one whose value there
//     breaks the schema as the code says (a string where an integer is expected, a
//     value outside the enum, a number past a bound, a missing member);
//   - an issue with neither Path nor Field whose code names a rule (oneof or enum, type, max
//     or maximum or lte, min or minimum or gte, required, in their spellings) is placed on the
//     one value of the arguments that breaks the schema's enum, type, bounds, lengths or
//     required properties so, when no other issue without a field names the same rule.
//
// Each is mapped only when exactly one place fits; otherwise a Path stays as written, and a
// Field or a rule names nothing to repair. It never guesses: not a property among several
// spellings, not an element among several candidates, not a fact the schema does not state
// (a pattern, a format, a union's branch). The work of mapping and reading the schema is
// bounded by its size, whatever the schema, the arguments or the failure hold.
//
// It gives up (nil, nil) unless every path is repaired: a partial repair would be refused
// again. A path inside a value an earlier repair replaced or removed counts as repaired:
// paths are repaired shallowest first, then in the order the issues name them, and Changes
// lists the edits in that order, each with Old (compact JSON; nil when it added the value),
// New (nil when it removed it) and Why (the issues' messages, or codes). It also gives up
// without issues or with more than 256, when Args is not a JSON object (or holds a key twice,
// which makes an edit ambiguous), and when the repair equals the arguments; when it gives up,
// Changes is nil, and Blocked lists each problem it could not address (its Path, the Field
// as written, the first issue's Code) and why, in words: "no allowed value or type is known",
// "the field matches several properties of the schema", "the path is not in the arguments",
// "the value is missing, and no default is known"; every problem is tried, so that the list
// is whole. When it returns a repair, Blocked is nil. The arguments it returns hold every repair, the lossy ones too: the loop
// decides whether to send them. Setting a value creates the objects missing on its path,
// never arrays: an index past the end of an array, or a path through a string, number,
// boolean or null, gives up. It never returns an error.
//
// It is a constant, so that no part of a program can change what another part's default
// means.
const Default defaultRewriter = 0

// defaultRewriter is Default's type.
type defaultRewriter uint8

// Rewrite repairs r (see Default).
func (defaultRewriter) Rewrite(_ context.Context, r *Request) (json.RawMessage, error) {
	return rewriteDefault(r), nil
}

// ErrReply is wrapped by the error LLM returns when the model's reply is not one
// JSON object of arguments.
var ErrReply = errors.New("remedy: the model's reply is not a JSON object of arguments")

// LLM asks a model to repair the arguments. complete sends a prompt to the model and
// returns its reply; any vendor's client fits behind it. The prompt is the envelope's Prompt,
// the operation, the arguments as sent, and the instruction to answer with the corrected
// arguments as one JSON object and nothing else.
//
// The reply is trusted only as far as it is an object: surrounding space and one Markdown code
// fence are removed, and a reply over 1 MiB, not valid JSON, or not an object is an error
// wrapping ErrReply. An empty reply, null, or the arguments unchanged give up (nil,
// nil); so do a Rewrite without an envelope and Args that are not a JSON object, without
// calling the model. An error from complete is returned wrapped.
func LLM(complete func(ctx context.Context, prompt string) (string, error)) Rewriter {
	return Func(func(ctx context.Context, r *Request) (json.RawMessage, error) {
		if complete == nil {
			return nil, errNoCompletion
		}
		if r == nil || r.Envelope == nil {
			return nil, nil
		}
		args := bytes.TrimSpace(r.Args)
		if len(args) == 0 || args[0] != '{' || !tape.Valid(string(args)) {
			return nil, nil
		}
		reply, err := complete(ctx, rewritePrompt(r.Envelope, r.Operation, args))
		if err != nil {
			return nil, fmt.Errorf("remedy: rewrite completion: %w", err)
		}
		out, err := readRewriteReply(reply)
		if out == nil || err != nil || bytes.Equal(out, jsonw.Compact(string(args))) {
			return nil, err
		}
		return out, nil
	})
}
