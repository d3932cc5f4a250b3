package rewrite_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/rewrite"
)

// Default repairs what the failure states exactly, and lists what it changed: here the
// only allowed currency, a number sent as a string, and a quantity over its maximum. Moving a
// quantity onto its bound changes what was asked for: that change is lossy, a proposal the
// loop sends only when its Policy approves.
func ExampleDefault() {
	body := []byte(`{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation.",
		"issues":[
			{"path":["currency"],"code":"enum","allowed_values":["usd"],"received":"US$"},
			{"path":["items",0,"quantity"],"code":"maximum","expected":{"type":"integer","maximum":100},"received":250},
			{"path":["items",1,"quantity"],"code":"invalid_type","expected":"integer","received":"3"}
		],"retryable":false}}`)
	e, _ := remedy.Parse(422, nil, body)

	r := &rewrite.Request{Operation: "create_order", Envelope: e, Attempt: 1,
		Args: json.RawMessage(`{"currency":"US$","items":[{"sku":"ABC-1","quantity":250},{"sku":"DEF-2","quantity":"3"}]}`)}
	out, err := rewrite.Default.Rewrite(context.Background(), r)
	fmt.Println(string(out), err)
	for _, c := range r.Changes {
		fmt.Printf("%s: %s -> %s (%s, lossy %v)\n", c.Path, c.Old, c.New, c.Rule, c.Lossy)
	}
	// Output:
	// {"currency":"usd","items":[{"sku":"ABC-1","quantity":100},{"sku":"DEF-2","quantity":3}]} <nil>
	// /currency: "US$" -> "usd" (only_allowed_value, lossy false)
	// /items/0/quantity: 250 -> 100 (clamp, lossy true)
	// /items/1/quantity: "3" -> 3 (coerce, lossy false)
}

// AgentBack's failures carry the enum only in the inline schema; the rewriter reads it there.
// A value in the wrong case is matched to the one allowed value it spells; a value that is
// none of them gets a proposed choice, marked lossy; a failure that names no value and no
// schema gets no guess: nil means give up.
func ExampleDefault_schema() {
	e, _ := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_input",
		"message":"Invalid input for tool charge: currency: Invalid option",
		"issues":[{"path":["currency"],"code":"invalid_value","message":"Invalid option: expected one of \"eur\"|\"usd\""}],
		"schema":{"type":"object","properties":{"amount":{"type":"integer","minimum":50,"maximum":1000000},
			"currency":{"type":"string","enum":["eur","usd"]}},"required":["amount","currency"]},
		"retryable":true}}`))
	for _, args := range []string{`{"amount":1200,"currency":"EUR"}`, `{"amount":1200,"currency":"GBP"}`} {
		r := &rewrite.Request{Operation: "charge", Args: json.RawMessage(args), Envelope: e, Attempt: 1}
		out, _ := rewrite.Default.Rewrite(context.Background(), r)
		fmt.Println(string(out), r.Changes[0].Rule, r.Changes[0].Lossy)
	}

	e, _ = remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_sort","field":"sort","message":"unknown sort order"}}`))
	out, err := rewrite.Default.Rewrite(context.Background(),
		&rewrite.Request{Operation: "list_orders", Args: json.RawMessage(`{"sort":"up"}`), Envelope: e, Attempt: 1})
	fmt.Println(out == nil, err)
	// Output:
	// {"amount":1200,"currency":"eur"} enum_match false
	// {"amount":1200,"currency":"eur"} choose_allowed true
	// true <nil>
}

// A server that names the field and its rule, and nothing else, is repaired from the
// operation's schema (Request.Schema; the loop passes Call.Schema): the enum it states
// matches "RED" to "red". Without the schema, Blocked says what was missing.
func ExampleDefault_operationSchema() {
	e := &remedy.Envelope{Status: 400, Code: "bad_request", Issues: []remedy.Issue{{Path: "/color", Code: "enum"}}}
	schema := json.RawMessage(`{"type":"object","properties":{"color":{"type":"string","enum":["red","green"]}}}`)
	args := json.RawMessage(`{"sku":"D-1","color":"RED"}`)

	r := &rewrite.Request{Operation: "create_item", Args: args, Envelope: e, Attempt: 1, Schema: schema}
	out, _ := rewrite.Default.Rewrite(context.Background(), r)
	fmt.Println(string(out), r.Changes[0].Rule)

	r = &rewrite.Request{Operation: "create_item", Args: args, Envelope: e, Attempt: 1}
	out, _ = rewrite.Default.Rewrite(context.Background(), r)
	fmt.Println(out == nil, r.Blocked[0].Path, r.Blocked[0].Why)
	// Output:
	// {"sku":"D-1","color":"red"} enum_match
	// true /color no allowed value or type is known
}

// LLM wraps any model client as a function from prompt to reply. The prompt carries the
// envelope's repair instruction and the arguments; the reply must be the corrected object.
func ExampleLLM() {
	complete := func(_ context.Context, prompt string) (string, error) {
		fmt.Print(prompt)
		return "```json\n{\"sort\": \"desc\", \"limit\": 20}\n```", nil // a model's fenced reply
	}
	rw := rewrite.LLM(complete)

	e, _ := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_sort","message":"sort must be asc or desc",
		"field":"sort","allowed_values":["asc","desc"]}}`))
	out, err := rw.Rewrite(context.Background(),
		&rewrite.Request{Operation: "list_orders", Args: json.RawMessage(`{"sort":"newest", "limit":20}`), Envelope: e, Attempt: 1})
	fmt.Println("->", string(out), err)
	// Output:
	// The call failed with invalid_sort (HTTP 400): sort must be asc or desc.
	// Fix these fields:
	// - /sort [invalid_sort]: sort must be asc or desc (allowed "asc", "desc")
	// Change the fields above, then call again; the same call will fail the same way.
	//
	// Operation: list_orders
	// Arguments sent:
	// {"sort":"newest","limit":20}
	//
	// Reply with the corrected arguments as one JSON object and nothing else: no prose, no Markdown. Change only what the failure requires and keep every other argument as it was. If the arguments cannot be repaired, reply null.
	// -> {"sort":"desc","limit":20} <nil>
}
