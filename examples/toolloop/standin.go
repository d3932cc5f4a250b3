package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// standIn plays the model behind a chat completion endpoint. Like a real endpoint it keeps no
// state: everything it knows is in the request, the conversation so far and the tools. It
// knows nothing of the billing API but what the tools say, and refuses a request that does not
// offer create_invoice with its errors, as an endpoint refuses a malformed request.
//
// Its turns: to the user's request it calls create_invoice with the user's words as they stand.
// To a tool's failure it looks the code up in the tool's error catalogue; when the catalogue
// says the failure can be fixed, it repairs each field the failure names from what the text
// says of it and the tool's schema, and calls again. To a success, or to a failure it cannot
// repair, it answers the user.
func standIn(_ context.Context, request []byte) ([]byte, error) {
	var req struct {
		Model    string        `json:"model"`
		Messages []message     `json:"messages"`
		Tools    []offeredTool `json:"tools"`
	}
	if err := json.Unmarshal(request, &req); err != nil {
		return nil, fmt.Errorf("stand-in: the request is not JSON: %w", err)
	}
	if req.Model == "" || len(req.Messages) == 0 {
		return nil, errors.New("stand-in: the request needs a model and messages")
	}
	tools := map[string]offeredTool{}
	for _, t := range req.Tools {
		if t.Type == "function" {
			tools[t.Function.Name] = t
		}
	}
	invoice, ok := tools["create_invoice"]
	if !ok {
		return nil, fmt.Errorf("stand-in: no create_invoice among the %d tools offered", len(req.Tools))
	}
	if _, ok := catalogue(invoice.Function.Description); !ok {
		return nil, errors.New("stand-in: create_invoice's description does not end with its errors")
	}

	reply := nextMessage(req.Messages, tools)
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	return json.Marshal(chatResponse{
		ID:      fmt.Sprintf("chatcmpl-standin-%d", len(req.Messages)),
		Object:  "chat.completion",
		Model:   req.Model,
		Choices: []choice{{Message: reply, FinishReason: finish}},
	})
}

// maxCalls is how many times the stand-in calls one tool before it tells the user it cannot.
const maxCalls = 3

// userWords reads the user's request: "invoice customer CUS-ADA for 12.00 Euro (memo)".
var userWords = regexp.MustCompile(`customer (\S+) for (\d+(?:\.\d+)?) (\pL+)(?: \(([^)]*)\))?`)

func nextMessage(messages []message, tools map[string]offeredTool) message {
	last := messages[len(messages)-1]
	switch last.Role {
	case "user":
		m := userWords.FindStringSubmatch(last.Content)
		if m == nil {
			return say("I can invoice a customer: tell me the customer's id, the amount and the currency.")
		}
		args := map[string]any{"customer_id": m[1], "amount": m[2], "currency": m[3]}
		if m[4] != "" {
			args["memo"] = m[4]
		}
		return callTool(messages, "create_invoice", args)
	case "tool":
		call, ok := findCall(messages, last.ToolCallID)
		if !ok {
			return say("I lost track of my tool call; please ask again.")
		}
		return afterTool(messages, call.Function, last.Content, tools[call.Function.Name])
	}
	return say("How can I help?")
}

// afterTool is the stand-in's turn after a tool answered the call it made.
func afterTool(messages []message, call functionCall, content string, tool offeredTool) message {
	var result map[string]any
	if json.Unmarshal([]byte(content), &result) == nil {
		return say(done(result, tool))
	}
	first, _, _ := strings.Cut(content, "\n")
	code := failureCode(content)
	catalogued, _ := catalogue(tool.Function.Description)
	retryable, known := catalogued[code]
	issues := readIssues(content)
	// A failure that names fields is repaired, whatever the catalogue says of retrying it:
	// "retryable" is whether the same call can succeed later, and a changed call is another.
	switch {
	case !known, len(issues) == 0 && !retryable:
		return say("I could not do it. " + first)
	case len(issues) == 0:
		return say("I could not do it, and the failure names nothing to change. " + first)
	case calls(messages, call.Name) >= maxCalls:
		return say(fmt.Sprintf("I tried %s %d times and could not get it right. %s", call.Name, maxCalls, first))
	}

	var args map[string]any
	if json.Unmarshal([]byte(call.Arguments), &args) != nil {
		return say("I could not do it. " + first)
	}
	props := properties(tool)
	for _, is := range issues {
		v, ok := is.fix(props[is.field])
		if !ok {
			return say(fmt.Sprintf("I could not do it: %s, and I cannot tell what to send instead. "+
				"What should %s be?", is.message, is.field))
		}
		args[is.field] = v
	}
	return callTool(messages, call.Name, args)
}

// done tells the user what the tool did, from its result.
func done(result map[string]any, tool offeredTool) string {
	id, _ := result["id"].(string)
	amount, _ := result["amount"].(float64)
	currency, _ := result["currency"].(string)
	customer, _ := result["customer_id"].(string)
	status, _ := result["status"].(string)
	if id == "" || currency == "" {
		b, _ := json.Marshal(result)
		return "Done: " + string(b)
	}
	if minorUnits(properties(tool)["amount"]) {
		amount /= 100
	}
	return fmt.Sprintf("Done: invoice %s bills %.2f %s to %s; it is a %s.",
		id, amount, strings.ToUpper(currency), customer, status)
}

// The failure text a tool answers with (Envelope.Prompt): its first line names the code, and
// each field to fix has a line "- /field [code]: message (expected ...; allowed ...;
// received ...; suggested ...)", the message left out when the issue has none.
var (
	failedWith = regexp.MustCompile(`failed with (\S+) \(HTTP \d+\)`)
	issueLine  = regexp.MustCompile(`^- /(\S+) \[(\S+)\](?:: (.*?))? \(((?:expected|allowed|received|suggested) .*)\)$`)
)

func failureCode(content string) string {
	if m := failedWith.FindStringSubmatch(content); m != nil {
		return m[1]
	}
	return ""
}

// issue is one field to fix, as the failure text put it.
type issue struct {
	field   string
	message string
	facts   map[string]string // "expected", "allowed", "received", "suggested": their JSON text
}

func readIssues(content string) []issue {
	var out []issue
	for line := range strings.Lines(content) {
		m := issueLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		is := issue{field: m[1], message: m[3], facts: map[string]string{}}
		if is.message == "" {
			is.message = is.field + " is refused (" + m[2] + ")"
		}
		for fact := range strings.SplitSeq(m[4], "; ") {
			name, value, _ := strings.Cut(fact, " ")
			is.facts[name] = value
		}
		out = append(out, is)
	}
	return out
}

// fix is the stand-in's guess for the field, from what the failure said of it and the field's
// schema: the suggested value; the allowed value the text sent begins with ("Euro" is "eur");
// the text sent reshaped to the expected pattern ("CUS-ADA" is "cus_ada"); or the number in
// the text sent, in minor units when the schema says so ("12.00" is 1200 cents).
//
// The schema's minor units come before a suggestion: the server suggests the text converted as
// it stands (12.00 for "12.00"), which for an amount in cents is a hundredth of what the user
// asked for. A model reads the field's description as well as the failure.
func (is issue) fix(schema map[string]any) (any, bool) {
	if strings.Contains(is.field, "/") {
		return nil, false // a nested field: not this stand-in's business
	}
	var expected struct {
		Pattern string `json:"pattern"`
		Type    string `json:"type"`
	}
	if json.Unmarshal([]byte(is.facts["expected"]), &expected) != nil {
		_ = json.Unmarshal([]byte(is.facts["expected"]), &expected.Type) // a bare type name
	}
	numeric := expected.Type == "integer" || expected.Type == "number"
	if s, ok := is.facts["suggested"]; ok && !(numeric && minorUnits(schema)) {
		var v any
		return v, json.Unmarshal([]byte(s), &v) == nil
	}
	var sent string
	if json.Unmarshal([]byte(is.facts["received"]), &sent) != nil {
		return nil, false
	}
	lower := strings.ToLower(strings.TrimSpace(sent))
	if allowed, ok := is.facts["allowed"]; ok {
		var values []any
		if json.Unmarshal([]byte("["+allowed+"]"), &values) != nil {
			return nil, false
		}
		for _, v := range values {
			if s, ok := v.(string); ok && s != "" && strings.HasPrefix(lower, s) {
				return s, true
			}
		}
		return nil, false
	}
	switch {
	case expected.Pattern != "":
		re, err := regexp.Compile(expected.Pattern)
		if err != nil {
			return nil, false
		}
		for _, guess := range []string{lower, strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(lower)} {
			if re.MatchString(guess) {
				return guess, true
			}
		}
	case numeric:
		var n float64
		if _, err := fmt.Sscanf(strings.TrimLeft(sent, " $€£"), "%g", &n); err != nil {
			return nil, false
		}
		if minorUnits(schema) {
			n = math.Round(n * 100)
		}
		if expected.Type == "integer" && n != math.Trunc(n) {
			return nil, false
		}
		return n, true
	}
	return nil, false
}

// minorUnits reports whether a schema says its amount is in cents.
func minorUnits(schema map[string]any) bool {
	d, _ := schema["description"].(string)
	d = strings.ToLower(d)
	return strings.Contains(d, "minor unit") || strings.Contains(d, "cents")
}

// properties are the schemas of the tool's arguments, by name.
func properties(tool offeredTool) map[string]map[string]any {
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	_ = json.Unmarshal(tool.Function.Parameters, &schema)
	return schema.Properties
}

// catalogue reads the errors a tool's description ends with ("- code (503, retryable): hint"),
// as whether the same call can succeed later, code by code; ok is false when the description
// does not end with them.
func catalogue(description string) (retryable map[string]bool, ok bool) {
	paragraphs := strings.Split(strings.TrimSpace(description), "\n\n")
	last := paragraphs[len(paragraphs)-1]
	if !strings.HasPrefix(last, "Errors (") {
		return nil, false
	}
	retryable = map[string]bool{}
	for line := range strings.Lines(last) {
		if m := catalogueLine.FindStringSubmatch(line); m != nil {
			retryable[m[1]] = m[2] == "retryable"
		}
	}
	return retryable, len(retryable) > 0
}

var catalogueLine = regexp.MustCompile(`^- (\S+) \((?:\d+, )?(retryable|not retryable)\)`)

// findCall is the tool call a tool message answers.
func findCall(messages []message, id string) (toolCall, bool) {
	for i := len(messages) - 1; i >= 0; i-- {
		for _, c := range messages[i].ToolCalls {
			if c.ID == id {
				return c, true
			}
		}
	}
	return toolCall{}, false
}

// calls counts the stand-in's calls of the tool name so far.
func calls(messages []message, name string) int {
	n := 0
	for _, m := range messages {
		for _, c := range m.ToolCalls {
			if c.Function.Name == name {
				n++
			}
		}
	}
	return n
}

func callTool(messages []message, name string, args map[string]any) message {
	b, err := json.Marshal(args)
	if err != nil {
		return say("I could not write the arguments: " + err.Error())
	}
	n := 0
	for _, m := range messages {
		n += len(m.ToolCalls)
	}
	return message{Role: "assistant", ToolCalls: []toolCall{{
		ID: fmt.Sprintf("call_%d", n+1), Type: "function",
		Function: functionCall{Name: name, Arguments: string(b)},
	}}}
}

func say(text string) message { return message{Role: "assistant", Content: text} }
