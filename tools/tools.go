package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/prose"
)

// ToolDefinition is an operation as a model is offered it for function calling: its name, a
// description that ends with the errors it may answer with, and the JSON Schema of its
// arguments. ToolDefinitions writes it in each vendor's shape.
type Definition struct {
	// Name is the tool's name for the model: the operation's name made portable (see
	// PortableToolName), valid for every vendor's API.
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Operation is the operation the tool runs, by the name the client and the server know
	// it by; the vendors' shapes leave it out.
	Operation string `json:"-"`
}

// ToolDefinitions are tool definitions, written in the shapes the model vendors' APIs take.
type Definitions []Definition

// OpenAI writes the definitions as the tools of OpenAI's Chat Completions API (and of the
// many APIs compatible with it): [{"type": "function", "function": {name, description,
// parameters}}].
func (ds Definitions) OpenAI() (json.RawMessage, error) {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	if err := ds.checkNames("OpenAI", openAIToolName, "^[a-zA-Z0-9_-]{1,64}$"); err != nil {
		return nil, err
	}
	out := make([]tool, len(ds))
	for i, d := range ds {
		out[i] = tool{Type: "function", Function: function{d.Name, d.Description, d.parameters()}}
	}
	return json.Marshal(out)
}

// Anthropic writes the definitions as the tools of Anthropic's Messages API: [{name,
// description, input_schema}].
func (ds Definitions) Anthropic() (json.RawMessage, error) {
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := ds.checkNames("Anthropic", openAIToolName, "^[a-zA-Z0-9_-]{1,64}$"); err != nil {
		return nil, err
	}
	out := make([]tool, len(ds))
	for i, d := range ds {
		out[i] = tool{d.Name, d.Description, d.parameters()}
	}
	return json.Marshal(out)
}

// Gemini writes the definitions as one tool of Google's Gemini API, with JSON Schema
// parameters: [{"functionDeclarations": [{name, description, parametersJsonSchema}]}].
func (ds Definitions) Gemini() (json.RawMessage, error) {
	type declaration struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parametersJsonSchema"`
	}
	type tool struct {
		Declarations []declaration `json:"functionDeclarations"`
	}
	if err := ds.checkNames("Gemini", geminiToolName, "a letter or '_', then letters, digits, '_', '.', ':' or '-', at most 64"); err != nil {
		return nil, err
	}
	decls := make([]declaration, len(ds))
	for i, d := range ds {
		decls[i] = declaration{d.Name, d.Description, d.parameters()}
	}
	return json.Marshal([]tool{{decls}})
}

// checkNames refuses definitions whose names vendor's API would refuse (rule, in words): a
// definition built by hand, not by a Toolset, whose names are portable.
func (ds Definitions) checkNames(vendor string, ok func(string) bool, rule string) error {
	for _, d := range ds {
		if !ok(d.Name) {
			return fmt.Errorf("remedy: tool name %q is not valid for %s (%s): use PortableToolName", d.Name, vendor, rule)
		}
	}
	return nil
}

// openAIToolName is OpenAI's and Anthropic's rule for a tool's name: ^[a-zA-Z0-9_-]{1,64}$.
func openAIToolName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !toolNameByte(name[i]) {
			return false
		}
	}
	return true
}

// geminiToolName is Gemini's rule for a function's name: a letter or '_' first, then letters,
// digits, '_', '.', ':' or '-', at most 64 characters.
func geminiToolName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	if c := name[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !toolNameByte(c) && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

// anyObject is the schema of arguments an operation does not describe.
var anyObject = json.RawMessage(`{"type":"object"}`)

// parameters is the definition's schema, any object when it has none (a definition built by
// hand may lack one).
func (d Definition) parameters() json.RawMessage {
	if len(d.Parameters) == 0 {
		return anyObject
	}
	return d.Parameters
}

// maxCatalogue bounds how many errors a tool's description lists; the rest are counted.
const maxCatalogue = 12

// loopsOwn are the codes of the protocol the loop speaks for the model — idempotency keys,
// confirmation tokens — which a tool's description leaves out, as it leaves out the codes of
// HTTP's own framing (HTTPOnly): the model can do nothing about either.
var loopsOwn = map[string]bool{
	"idempotency_key_invalid": true, "idempotency_key_required": true, "idempotency_key_reused": true,
	"idempotency_in_flight": true, "confirmation_invalid": true,
}

// ToolDefinition describes the operation as a tool: its Description followed by a compact
// catalogue of its Errors — each code with its status, whether a retry can succeed, and its
// hint — so that the model knows the contract before its first failure. The codes of the
// protocol the loop handles itself (idempotency keys, confirmation tokens, media types) are
// left out, and confirmation_required is told as the user's to approve. Without Parameters,
// the schema is any object: {"type":"object"}. Its Name is PortableToolName(op.Name); a
// Toolset also keeps the names of its tools apart.
func DefinitionOf(op client.Operation) Definition {
	params := op.Parameters
	if len(params) == 0 {
		params = anyObject
	}
	return Definition{Name: PortableName(op.Name), Description: describe(op, nil), Parameters: params, Operation: op.Name}
}

// inputLead opens the line of a tool's description that gives its schema
// (ToolOptions.SchemaInDescription).
const inputLead = "Input: one JSON object of this JSON Schema: "

// describe is the operation's description for a model: its Description, the schema of its
// arguments when input is set (on one line), and the catalogue of its errors.
func describe(op client.Operation, input json.RawMessage) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(op.Description))
	if len(input) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(inputLead)
		var line bytes.Buffer
		if json.Compact(&line, input) != nil {
			// Not JSON: the text as given, on one line all the same.
			line.Reset()
			line.WriteString(strings.Join(strings.Fields(string(input)), " "))
		}
		b.Write(line.Bytes())
	}
	if len(op.Errors) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("Errors (the failure names the code; fix what it says, then call again):")
		listed := 0
		for i, e := range op.Errors {
			if loopsOwn[e.Code] || remedy.HTTPOnly(e.Code) {
				continue
			}
			if listed == maxCatalogue {
				fmt.Fprintf(&b, "\n- and %d more", len(op.Errors)-i)
				break
			}
			listed++
			if e.Code == "confirmation_required" {
				e.Hint = "the call needs the user's confirmation and does not run until they approve it"
			}
			b.WriteString("\n- ")
			b.WriteString(e.Code)
			b.WriteString(" (")
			if e.Status != 0 {
				b.WriteString(strconv.Itoa(e.Status))
				b.WriteString(", ")
			}
			if e.Retryable {
				b.WriteString("retryable)")
			} else {
				b.WriteString("not retryable)")
			}
			if h := strings.TrimSpace(e.Hint); h != "" {
				b.WriteString(": ")
				b.WriteString(h)
			}
		}
	}
	return b.String()
}

// CallFunc runs one call of the operation name with args through a loop: Client.Call, or
// package mcp's Client.Call.
type CallFunc func(ctx context.Context, name string, args json.RawMessage) (*client.Response, error)

// ToolOptions shape how a Toolset answers a model.
type Options struct {
	// FailureAsError returns the text of a failure the loop could not repair (and of a
	// refused tool call) as the error of Call and Dispatch, instead of as their output with
	// a nil error. Agent frameworks differ: most show the model a tool's output, some its
	// error.
	FailureAsError bool
	// SchemaInDescription adds the JSON Schema of a tool's arguments to Tool.Description, on
	// a line of its own after the operation's description: "Input: one JSON object of this
	// JSON Schema: {...}". Set it for agents that show a model only a tool's name and
	// description, such as langchaingo's text (ReAct) agents; function-calling APIs take the
	// schema apart, so Definitions and Tool.Definition are the same either way.
	SchemaInDescription bool
}

// ErrToolFailed is wrapped by the error Tool.Call and Toolset.Dispatch return with
// ToolOptions.FailureAsError, when the call did not succeed; the error's text is what the
// model should read.
var ErrFailed = errors.New("remedy: the tool call did not succeed")

// Toolset offers operations to a model as tools, and runs the model's tool calls through the
// loop: a success is the result's JSON, and a failure the loop could not repair is
// Envelope.Prompt — what failed, which field to fix and how, whether to retry — never a stack
// trace, an HTML page or a Go error's internals. It is safe for concurrent use.
type Toolset struct {
	tools []*Tool
	ops   []client.Operation // every tool's operation, for the tool that reads what another writes
	// byOperation finds a tool by its operation's name where that is not its tool name.
	byOperation map[string]*Tool
	call        CallFunc
	opts        Options
}

// NewToolset returns a toolset of ops, whose calls run through call. Client.Toolset and package
// mcp's Client.Toolset build one.
//
// Each tool is named by PortableToolName of its operation's name, so that every vendor's API
// takes the definitions. Two operations whose names map to one tool name ("a.b" and "a/b") are
// kept apart: each whose name had to change takes a hash of its own name as a suffix
// ("a_b_k3x9..."), deterministically. The model's calls may name a tool by its tool name or
// by its operation's name; the call runs the operation by its own name.
func New(ops []client.Operation, call CallFunc, opts Options) *Toolset {
	ts := &Toolset{call: call, opts: opts, ops: slices.Clone(ops)}
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name
	}
	portable := portableNames(names)
	for i, op := range ops {
		t := &Tool{ts: ts, op: op, def: DefinitionOf(op)}
		t.def.Name = portable[i]
		t.desc = t.def.Description
		if opts.SchemaInDescription {
			t.desc = describe(op, t.def.Parameters)
		}
		ts.tools = append(ts.tools, t)
		if portable[i] != op.Name {
			if ts.byOperation == nil {
				ts.byOperation = make(map[string]*Tool)
			}
			ts.byOperation[op.Name] = t
		}
	}
	slices.SortFunc(ts.tools, func(a, b *Tool) int { return strings.Compare(a.def.Name, b.def.Name) })
	return ts
}

// ForClient offers c's registered operations (by hand or from LoadOpenAPI) to a model as a
// Toolset, sorted by name, whose calls run through c.Call. Operations registered later are not
// in it: call ForClient again.
func ForClient(c *client.Client, opts Options) *Toolset {
	return New(c.Operations(), func(ctx context.Context, name string, args json.RawMessage) (*client.Response, error) {
		return c.Call(ctx, name, args)
	}, opts)
}

// Definitions are the tools' definitions, sorted by name.
func (ts *Toolset) Definitions() Definitions {
	out := make(Definitions, len(ts.tools))
	for i, t := range ts.tools {
		out[i] = t.def
	}
	return out
}

// Tools are the tools, sorted by name.
func (ts *Toolset) Tools() []*Tool { return slices.Clone(ts.tools) }

// Tool returns the tool named name: by its tool name, else by its operation's name.
func (ts *Toolset) Tool(name string) (*Tool, bool) {
	i, ok := slices.BinarySearchFunc(ts.tools, name, func(t *Tool, name string) int { return strings.Compare(t.def.Name, name) })
	if ok {
		return ts.tools[i], true
	}
	t, ok := ts.byOperation[name]
	return t, ok
}

// Dispatch runs the model's tool call — the tool's name and its arguments as the JSON text
// every vendor's tool-call message carries — and returns what the model should read next: the
// result's JSON on success; otherwise (an unknown tool, arguments that are not a JSON object,
// a failure the loop could not repair) a text saying what to do, as the output or, with
// ToolOptions.FailureAsError, as an error wrapping ErrToolFailed. The error is also set when
// ctx ends.
//
// The text follows from why the loop stopped, one sentence of advice per cause (see
// CallError.Cause): a call that may have executed is never to be sent again, and the read of
// the same resource is named when the toolset has one; a confirmation is the program's
// ConfirmPolicy to approve, not the model's. It never holds a confirmation token or an
// idempotency key, wherever the server wrote them (they read [withheld]), and arguments that
// carry confirmationToken or idempotencyKey are refused before anything is sent: a model
// cannot confirm on its own.
func (ts *Toolset) Dispatch(ctx context.Context, name, arguments string) (string, error) {
	return ts.answer(ts.Invoke(ctx, name, arguments))
}

// ToolResult is the outcome of one tool call, for the program around the model: what the
// model should read, and whether the call failed (which the text alone does not tell a
// program, as Anthropic's is_error and a hook counting failures need).
type Result struct {
	Output string // the result's JSON, or the text saying what to do
	Failed bool   // the call did not succeed: an unknown tool, bad arguments, a failure not repaired
	// Response is the success (its attempts included); Err is why the call stopped, a
	// *CallError when it ran or was refused before sending (ErrInvalidArguments: arguments
	// that carry confirmationToken or idempotencyKey), nil for an unknown tool or arguments
	// that are not an object. Err is for the program: it holds the challenge's token, which
	// Output never does.
	Response *client.Response
	Err      error
}

// Invoke runs the model's tool call as Dispatch does and returns its whole outcome; its error
// is only the context's, when ctx ended. ToolOptions.FailureAsError does not apply.
func (ts *Toolset) Invoke(ctx context.Context, name, arguments string) (Result, error) {
	t, ok := ts.Tool(name)
	if !ok {
		names := make([]string, len(ts.tools))
		for i, t := range ts.tools {
			names[i] = t.def.Name
		}
		return Result{Failed: true, Output: fmt.Sprintf("There is no tool named %q. The tools are: %s.", name, strings.Join(names, ", "))}, nil
	}
	return t.invoke(ctx, arguments)
}

// answer is a result as Call and Dispatch return it: the output, and the failure's text as
// an error when ToolOptions.FailureAsError says so.
func (ts *Toolset) answer(r Result, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if r.Failed && ts.opts.FailureAsError {
		return "", &toolError{r.Output}
	}
	return r.Output, nil
}

// toolError is a failure's text as an error: its message is exactly what the model reads.
type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }
func (e *toolError) Unwrap() error { return ErrFailed }

// Tool is one operation offered to a model. Its method set is that of langchaingo's
// tools.Tool (Name, Description, Call), so it serves as one without this package importing
// langchaingo.
type Tool struct {
	ts   *Toolset
	op   client.Operation
	def  Definition
	desc string // def.Description, with the schema when ToolOptions.SchemaInDescription
}

// Name is the tool's name for the model (see NewToolset): its operation's name, made
// portable.
func (t *Tool) Name() string { return t.def.Name }

// Description is what the operation does, followed by the schema of its arguments when
// ToolOptions.SchemaInDescription is set, and by the errors it may answer with.
func (t *Tool) Description() string { return t.desc }

// Definition is the tool's definition, for a vendor's function-calling API.
func (t *Tool) Definition() Definition { return t.def }

// Call runs the operation with input, the arguments as a JSON object ("" or "null": none),
// through the loop, and returns what the model should read next, as Toolset.Dispatch does.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	return t.ts.answer(t.invoke(ctx, input))
}

func (t *Tool) invoke(ctx context.Context, input string) (Result, error) {
	args, err := toolArguments(input)
	if err != nil {
		return Result{Failed: true, Output: fmt.Sprintf("The arguments of %s must be one JSON object (%s). Call it again with a JSON object.", t.def.Name, err)}, nil
	}
	if ae := reservedArguments(args); ae != nil {
		// Nothing is sent: a model that could set these would confirm on its own, or
		// replay another call's result.
		ce := &client.CallError{Operation: t.def.Operation, Cause: client.ErrInvalidArguments, Detail: "the arguments carry a member only the loop sends", Err: ae}
		return Result{Failed: true, Output: failureText(t.def.Name, &t.op, ce, nil) +
			"(The program sends " + remedy.ArgConfirmationToken + " and " + remedy.ArgIdempotencyKey + " itself; a confirmation is the user's to give, through the program.)\n", Err: ce}, nil
	}
	resp, err := t.ts.call(ctx, t.def.Operation, args)
	if err == nil {
		out := string(resp.Body)
		if len(resp.Body) == 0 {
			out = fmt.Sprintf(`{"status":%d}`, resp.Status)
		}
		return Result{Output: redactLong(out, attemptSecrets(nil, resp.Attempts)), Response: resp}, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Result{Failed: true, Err: err}, ctxErr
	}
	return Result{Failed: true, Output: failureText(t.def.Name, &t.op, err, t.ts.readOf), Err: err}, nil
}

// readOf names the tool that reads what op writes ("" when none): see readOf.
func (ts *Toolset) readOf(op *client.Operation) string {
	name := readOf(op, ts.ops)
	if name == "" {
		return ""
	}
	if t, ok := ts.Tool(name); ok {
		return t.def.Name // the name the model knows it by
	}
	return name
}

// reservedArguments refuses arguments that carry a member the loop alone sends: the
// confirmation token (which only a payload the caller's ConfirmPolicy approved goes with) and
// the idempotency key. Nil when they carry neither.
func reservedArguments(args json.RawMessage) *client.ArgumentsError {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil // not an object: the loop says so
	}
	var ae *client.ArgumentsError
	for _, name := range []string{remedy.ArgConfirmationToken, remedy.ArgIdempotencyKey} {
		if _, ok := m[name]; ok {
			if ae == nil {
				ae = &client.ArgumentsError{}
			}
			ae.Issues = append(ae.Issues, remedy.Issue{Path: "/" + name, Code: "reserved", Message: name + " is sent by the program, not by a tool call: leave it out"})
		}
	}
	return ae
}

// redactLong replaces in a success's body the secrets long enough not to be mistaken for
// ordinary values (8 bytes or more): a result the model reads never echoes a key or a token.
func redactLong(s string, secrets []string) string {
	return prose.Redact(s, slices.DeleteFunc(secrets, func(x string) bool { return len(x) < 8 }))
}

// toolArguments reads a model's arguments: one JSON object; empty and null are none.
func toolArguments(input string) (json.RawMessage, error) {
	s := strings.TrimSpace(input)
	if s == "" || s == "null" {
		return json.RawMessage("{}"), nil
	}
	if s[0] != '{' {
		return nil, errors.New("got something other than an object")
	}
	if !json.Valid([]byte(s)) {
		return nil, errors.New("it is not valid JSON")
	}
	return json.RawMessage(s), nil
}
