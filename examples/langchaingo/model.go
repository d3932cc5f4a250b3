package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// standIn plays the agent's model in the ReAct text format. It knows nothing of the billing
// API beyond what its prompt holds. Its first call is what a hasty model writes: the amount and
// the currency as the question spells them. After a failure it reads the observation, repairs
// each field it names from what it says (and from the field's schema in the tool list), and
// calls again; after a success it answers from the result.
type standIn struct {
	out   io.Writer
	calls int
}

var _ llms.Model = (*standIn)(nil)

// GenerateContent answers the conversation's text (the ReAct agent sends it as one message).
func (m *standIn) GenerateContent(_ context.Context, messages []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	var prompt strings.Builder
	for _, msg := range messages {
		for _, part := range msg.Parts {
			if t, ok := part.(llms.TextContent); ok {
				prompt.WriteString(t.Text)
			}
		}
	}
	m.calls++
	reply := m.reply(prompt.String())
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply, StopReason: "stop"}}}, nil
}

// Call is langchaingo's older single-prompt form.
func (m *standIn) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

const (
	questionMark    = "\nQuestion: "
	observationMark = "\nObservation: "
)

// reply is the model's next turn: an Action with its Action Input, or a Final Answer. The
// format instructions also show a Question and an Observation: the conversation is after the
// last Question.
func (m *standIn) reply(prompt string) string {
	q := strings.LastIndex(prompt, questionMark)
	if q < 0 {
		return m.say("", "Final Answer: I was asked no question.")
	}
	question, scratchpad, _ := strings.Cut(prompt[q+len(questionMark):], "\n")
	i := strings.LastIndex(scratchpad, observationMark)
	if i < 0 {
		return m.say("", m.firstCall(prompt, question))
	}
	observation := strings.TrimSpace(scratchpad[i+len(observationMark):])
	tool, input := lastAction(scratchpad[:i])
	return m.say(observation, m.next(prompt, tool, input, observation))
}

// say prints what the model read of its prompt (the last observation) and what it writes.
func (m *standIn) say(observation, reply string) string {
	if observation != "" {
		fmt.Fprintf(m.out, "  model reads:\n%s", indent("    | Observation: "+observation))
	}
	fmt.Fprintf(m.out, "  model writes:\n%s", indent("    | "+reply))
	return reply
}

func indent(text string) string {
	return strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n    | ") + "\n"
}

var (
	customerID = regexp.MustCompile(`\bcus_[a-z0-9]+\b`)
	money      = regexp.MustCompile(`\b(\d+(?:\.\d+)?) ([A-Za-z]+)\b`)
)

// firstCall reads the question and calls create_invoice with what it says, as written.
func (m *standIn) firstCall(prompt, question string) string {
	if !strings.Contains(prompt, "\n- create_invoice: ") {
		return "Final Answer: I have no tool to create an invoice with."
	}
	customer := customerID.FindString(question)
	amount := money.FindStringSubmatch(question)
	if customer == "" || amount == nil {
		return "Final Answer: Which customer, and how much?"
	}
	args, _ := json.Marshal(map[string]any{"customer_id": customer, "amount": amount[1], "currency": amount[2]})
	return "Thought: I should create the invoice.\nAction: create_invoice\nAction Input: " + string(args)
}

var (
	actionLine = regexp.MustCompile(`(?m)^Action: (.*)$`)
	inputLine  = regexp.MustCompile(`(?m)^Action Input: (.*)$`)
)

// lastAction is the tool and input of the model's last Action in the scratchpad.
func lastAction(scratchpad string) (tool, input string) {
	if all := actionLine.FindAllStringSubmatch(scratchpad, -1); all != nil {
		tool = strings.TrimSpace(all[len(all)-1][1])
	}
	if all := inputLine.FindAllStringSubmatch(scratchpad, -1); all != nil {
		input = strings.TrimSpace(all[len(all)-1][1])
	}
	return tool, input
}

// next reads the observation of the call tool(input): a result to answer from, or a failure
// whose fields it repairs.
func (m *standIn) next(prompt, tool, input, observation string) string {
	if strings.HasPrefix(observation, "{") {
		return "Thought: I now know the final answer\nFinal Answer: " + answer(observation)
	}
	first, _, _ := strings.Cut(observation, "\n")
	var args map[string]any
	if json.Unmarshal([]byte(input), &args) != nil {
		return "Final Answer: I could not do it: " + first
	}
	fixed := 0
	for line := range strings.Lines(observation) {
		match := issueLine.FindStringSubmatch(strings.TrimSpace(line))
		if match == nil {
			continue
		}
		if v, ok := repair(args, match[1], facts(match[2]), fieldSchema(prompt, tool, match[1])); ok {
			args[strings.TrimPrefix(match[1], "/")] = v
			fixed++
		}
	}
	again, _ := json.Marshal(args)
	if fixed == 0 || string(again) == input {
		return "Final Answer: I could not do it: " + first
	}
	return fmt.Sprintf("Thought: The call was refused; the observation says which fields to fix. I fix them and call again.\n"+
		"Action: %s\nAction Input: %s", tool, again)
}

// issueLine is one "- /field [code]: message (expected ...; allowed ...; received ...;
// suggested ...)" line of a repair text; the stand-in repairs top-level fields only.
var issueLine = regexp.MustCompile(`^- /([^/\s]+) .*? \(((?:expected|allowed|received|suggested) .*)\)$`)

// facts splits "expected X; allowed Y; received Z" into its parts.
func facts(text string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(text, "; ") {
		name, val, _ := strings.Cut(part, " ")
		out[name] = val
	}
	return out
}

// field is what the tool list's schema says of one argument.
type field struct {
	Description string `json:"description"`
}

// schemaLead opens the line of a tool's description that gives its arguments' schema
// (tools.Options.SchemaInDescription).
const schemaLead = "Input: one JSON object of this JSON Schema: "

// fieldSchema finds the tool in the prompt's list of tools, reads its schema and returns what
// it says of the property name (nothing when the prompt gives no schema).
func fieldSchema(prompt, tool, name string) field {
	_, rest, ok := strings.Cut(prompt, "\n- "+tool+": ")
	if ok {
		_, rest, ok = strings.Cut(rest, schemaLead)
	}
	if !ok {
		return field{}
	}
	line, _, _ := strings.Cut(rest, "\n")
	var s struct {
		Properties map[string]field `json:"properties"`
	}
	_ = json.Unmarshal([]byte(line), &s)
	return s.Properties[name]
}

// repair is the model's new value for the field name, from what the failure says of it.
func repair(args map[string]any, name string, facts map[string]string, f field) (any, bool) {
	var received any
	if json.Unmarshal([]byte(facts["received"]), &received) != nil {
		received = args[name]
	}
	text, _ := received.(string)
	// An amount in minor units sent as "12.00": a suggestion of 12.00 would bill 12 cents.
	// Reading the field's description, a model knows better than to take it.
	if unit := strings.ToLower(f.Description); strings.Contains(text, ".") &&
		(strings.Contains(unit, "minor unit") || strings.Contains(unit, "cents")) {
		if major, err := strconv.ParseFloat(text, 64); err == nil {
			return math.Round(major * 100), true
		}
	}
	if s, ok := facts["suggested"]; ok {
		var v any
		return v, json.Unmarshal([]byte(s), &v) == nil
	}
	if allowed, ok := facts["allowed"]; ok {
		var values []string
		if json.Unmarshal([]byte("["+allowed+"]"), &values) != nil {
			return nil, false
		}
		for _, v := range values { // "Euro", "EUR", "euros" all mean "eur"
			if strings.HasPrefix(strings.ToLower(text), v) {
				return v, true
			}
		}
		return nil, false
	}
	if expected := strings.Trim(facts["expected"], `"`); expected == "integer" || expected == "number" {
		n, err := strconv.ParseFloat(text, 64)
		return n, err == nil
	}
	return nil, false
}

// answer is the final answer from create_invoice's result.
func answer(result string) string {
	var inv struct {
		ID         string `json:"id"`
		CustomerID string `json:"customer_id"`
		Currency   string `json:"currency"`
		Amount     int    `json:"amount"`
		Status     string `json:"status"`
	}
	if json.Unmarshal([]byte(result), &inv) != nil || inv.ID == "" {
		return "Done: " + result
	}
	return fmt.Sprintf("Invoice %s for %s is created: %d.%02d %s, status %s.",
		inv.ID, inv.CustomerID, inv.Amount/100, inv.Amount%100, strings.ToUpper(inv.Currency), inv.Status)
}
