package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// standIn plays the chat model, as an eino model.ToolCallingChatModel. It knows the user wants
// an invoice and nothing of the billing API beyond the tools it is offered: its first guess at
// the arguments is wrong, it repairs them from the text the tool answers (the fields to fix,
// with what each allows or suggests), and it answers once the tool succeeds.
type standIn struct {
	out   io.Writer
	tools []*schema.ToolInfo
}

var _ model.ToolCallingChatModel = (*standIn)(nil)

// maxCalls is how many times the stand-in calls the tool before it gives up.
const maxCalls = 3

// firstGuess is the stand-in's first call: the currency as a word, the amount as text.
const firstGuess = `{"customer_id":"cus_ada","currency":"Euro","amount":"1200"}`

// WithTools returns the model offered tools, as the agent does once when it is built.
func (m *standIn) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	c := *m
	c.tools = tools
	return &c, nil
}

// Generate answers the conversation so far: a tool call, or the final answer.
func (m *standIn) Generate(_ context.Context, msgs []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if len(msgs) == 0 {
		return nil, errors.New("stand-in: no messages")
	}
	last := msgs[len(msgs)-1]
	if last.Role != schema.Tool {
		if err := m.offered("create_invoice"); err != nil {
			return nil, err
		}
		return m.call(1, firstGuess), nil
	}

	fmt.Fprintln(m.out, "    model reads the tool message:")
	for line := range strings.Lines(last.Content) {
		fmt.Fprintln(m.out, strings.TrimRight("    | "+line, " \n"))
	}
	var invoice struct {
		ID       string `json:"id"`
		Customer string `json:"customer_id"`
		Currency string `json:"currency"`
		Amount   int    `json:"amount"`
		Status   string `json:"status"`
	}
	if json.Unmarshal([]byte(last.Content), &invoice) == nil && invoice.ID != "" {
		return schema.AssistantMessage(fmt.Sprintf("Invoice %s to %s for %d.%02d %s is created; it is a %s.",
			invoice.ID, invoice.Customer, invoice.Amount/100, invoice.Amount%100,
			strings.ToUpper(invoice.Currency), invoice.Status), nil), nil
	}

	calls := 0
	var sent string
	for _, msg := range msgs {
		for _, tc := range msg.ToolCalls {
			calls++
			if tc.ID == last.ToolCallID {
				sent = tc.Function.Arguments
			}
		}
	}
	fixed, ok := repair(sent, last.Content)
	if !ok || calls >= maxCalls {
		first, _, _ := strings.Cut(last.Content, "\n")
		return schema.AssistantMessage("I could not create the invoice. "+first, nil), nil
	}
	return m.call(calls+1, fixed), nil
}

// Stream is Generate as a stream of one message.
func (m *standIn) Stream(ctx context.Context, msgs []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// offered checks that the tool is among those the model was given, and prints what the model
// learns of it from its converted schema.
func (m *standIn) offered(name string) error {
	names := make([]string, len(m.tools))
	for i, t := range m.tools {
		names[i] = t.Name
	}
	i := slices.Index(names, name)
	if i < 0 {
		return fmt.Errorf("stand-in: no tool %s among %v", name, names)
	}
	params, err := m.tools[i].ToJSONSchema()
	if err != nil {
		return err
	}
	fmt.Fprintf(m.out, "model is offered %d tools (%s); %s requires %s\n",
		len(names), strings.Join(names, ", "), name, strings.Join(params.Required, ", "))
	return nil
}

func (m *standIn) call(n int, args string) *schema.Message {
	fmt.Fprintf(m.out, "\n[%d] model calls create_invoice %s\n", n, args)
	return schema.AssistantMessage("", []schema.ToolCall{{
		ID:       fmt.Sprintf("call_%d", n),
		Type:     "function",
		Function: schema.FunctionCall{Name: "create_invoice", Arguments: args},
	}})
}

// issueLine is one "- /path [code]: message (expected ...; allowed ...; received ...;
// suggested ...)" line of the repair text.
var issueLine = regexp.MustCompile(`^- (/\S*) \[[^]]*\]: .*? \(((?:expected|allowed|received|suggested) .*)\)$`)

// repair applies the fixes the repair text names to the arguments sent, as a model would: a
// suggested value as it is, else the allowed value the value sent was meant as ("Euro" is
// "eur"). It reports false when it fixed nothing.
func repair(sent, text string) (string, bool) {
	var args map[string]any
	if json.Unmarshal([]byte(sent), &args) != nil {
		return "", false
	}
	fixed := 0
	for line := range strings.Lines(text) {
		match := issueLine.FindStringSubmatch(strings.TrimSpace(line))
		if match == nil {
			continue
		}
		facts := map[string]string{}
		for part := range strings.SplitSeq(match[2], "; ") {
			name, val, _ := strings.Cut(part, " ")
			facts[name] = val
		}
		if v, ok := fix(facts); ok && set(args, match[1], v) {
			fixed++
		}
	}
	if fixed == 0 {
		return "", false
	}
	out, err := json.Marshal(args)
	return string(out), err == nil
}

// fix is the value one field should take, from what the repair text says of it.
func fix(facts map[string]string) (any, bool) {
	if s, ok := facts["suggested"]; ok {
		var v any
		return v, json.Unmarshal([]byte(s), &v) == nil
	}
	var received string
	if json.Unmarshal([]byte(facts["received"]), &received) != nil {
		return nil, false
	}
	var allowed []string
	if json.Unmarshal([]byte("["+facts["allowed"]+"]"), &allowed) != nil {
		return nil, false
	}
	for _, v := range allowed {
		if v != "" && strings.HasPrefix(strings.ToLower(received), strings.ToLower(v)) {
			return v, true
		}
	}
	return nil, false
}

// set puts v at the JSON Pointer path in args, and reports whether the path was there.
func set(args map[string]any, path string, v any) bool {
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	names := strings.Split(strings.TrimPrefix(path, "/"), "/")
	obj := args
	for i, name := range names {
		name = unescape.Replace(name)
		if i == len(names)-1 {
			if _, ok := obj[name]; !ok {
				return false
			}
			obj[name] = v
			return true
		}
		next, ok := obj[name].(map[string]any)
		if !ok {
			return false
		}
		obj = next
	}
	return false
}
