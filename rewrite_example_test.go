package remedy_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/remedy-go/remedy"
)

// DefaultRewriter repairs what the failure states exactly: here the only allowed currency, a
// quantity over its maximum, and a number sent as a string.
func ExampleDefaultRewriter() {
	body := []byte(`{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation.",
		"issues":[
			{"path":["currency"],"code":"enum","allowed_values":["usd"],"received":"US$"},
			{"path":["items",0,"quantity"],"code":"maximum","expected":{"type":"integer","maximum":100},"received":250},
			{"path":["items",1,"quantity"],"code":"invalid_type","expected":"integer","received":"3"}
		],"retryable":false}}`)
	e, _ := remedy.Parse(422, nil, body)

	args := json.RawMessage(`{"currency":"US$","items":[{"sku":"ABC-1","quantity":250},{"sku":"DEF-2","quantity":"3"}]}`)
	out, err := remedy.DefaultRewriter.Rewrite(context.Background(),
		&remedy.Rewrite{Operation: "create_order", Args: args, Envelope: e, Attempt: 1})
	fmt.Println(string(out), err)

	// A failure that names no single fix gets no guess: nil means give up.
	e, _ = remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_sort","field":"sort","allowed_values":["asc","desc"]}}`))
	out, err = remedy.DefaultRewriter.Rewrite(context.Background(),
		&remedy.Rewrite{Operation: "list_orders", Args: json.RawMessage(`{"sort":"up"}`), Envelope: e, Attempt: 1})
	fmt.Println(out == nil, err)
	// Output:
	// {"currency":"usd","items":[{"sku":"ABC-1","quantity":100},{"sku":"DEF-2","quantity":3}]} <nil>
	// true <nil>
}

// LLMRewriter wraps any model client as a function from prompt to reply. The prompt carries the
// envelope's repair instruction and the arguments; the reply must be the corrected object.
func ExampleLLMRewriter() {
	complete := func(_ context.Context, prompt string) (string, error) {
		fmt.Print(prompt)
		return "```json\n{\"sort\": \"desc\", \"limit\": 20}\n```", nil // a model's fenced reply
	}
	rw := remedy.LLMRewriter(complete)

	e, _ := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_sort","message":"sort must be asc or desc",
		"field":"sort","allowed_values":["asc","desc"]}}`))
	out, err := rw.Rewrite(context.Background(),
		&remedy.Rewrite{Operation: "list_orders", Args: json.RawMessage(`{"sort":"newest", "limit":20}`), Envelope: e, Attempt: 1})
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
