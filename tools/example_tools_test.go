package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/tools"
)

// Offer a client's operations to a model as tools, and run the model's tool calls through the
// loop. The server here refuses a currency the way the reference server does; with no
// rewriter (WithRewriter(nil): by default the loop would make this lossless repair itself),
// the failure goes back to the model as repair text.
func ExampleToolset() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"EUR"`) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(422)
			io.WriteString(w, `{"error":{"statusCode":422,"code":"invalid_body","message":"currency must be one of usd, eur",`+
				`"retryable":false,"issues":[{"path":["currency"],"code":"enum","message":"currency must be one of usd, eur",`+
				`"allowed_values":["usd","eur"],"suggested_value":"eur"}]}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"in_1","status":"draft"}`)
	}))
	defer srv.Close()

	c, _ := client.New(client.WithBaseURL(srv.URL), client.WithRewriter(nil), client.WithOperations(client.Operation{
		Name: "create_invoice", Method: "POST", Path: "/v1/invoices",
		Description: "Create a draft invoice.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"currency":{"enum":["usd","eur"]},"amount":{"type":"integer"}}}`),
		Errors:      []client.ErrorCode{{Code: "invalid_body", Status: 422, Retryable: false, Hint: "Fix the fields named in issues."}},
	}))
	tools := tools.ForClient(c, tools.Options{})
	defs, _ := tools.Definitions().OpenAI() // also Anthropic() and Gemini()
	fmt.Println(string(defs))

	// The model's tool call, as its message carries it:
	out, _ := tools.Dispatch(context.Background(), "create_invoice", `{"currency":"EUR","amount":1200}`)
	fmt.Print(out)
	out, _ = tools.Dispatch(context.Background(), "create_invoice", `{"currency":"eur","amount":1200}`)
	fmt.Println(out)
	// Output:
	// [{"type":"function","function":{"name":"create_invoice","description":"Create a draft invoice.\n\nErrors (the failure names the code; fix what it says, then call again):\n- invalid_body (422, not retryable): Fix the fields named in issues.","parameters":{"type":"object","properties":{"currency":{"enum":["usd","eur"]},"amount":{"type":"integer"}}}}}]
	// The call failed with invalid_body (HTTP 422): currency must be one of usd, eur.
	// Fix these fields:
	// - /currency [enum]: currency must be one of usd, eur (allowed "usd", "eur"; suggested "eur")
	// create_invoice did not run. Change the fields above, then call it again; the same call will fail the same way.
	// {"id":"in_1","status":"draft"}
}

// For an agent that shows a model only each tool's name and description (langchaingo's ReAct
// agents, for one), SchemaInDescription puts the schema of the arguments in the description.
func ExampleOptions_schemaInDescription() {
	tools := tools.New([]client.Operation{{
		Name: "get_invoice", Method: "GET", Path: "/v1/invoices/{id}",
		Description: "Read an invoice.",
		Parameters:  json.RawMessage(`{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}`),
	}}, nil, tools.Options{SchemaInDescription: true})
	for _, t := range tools.Tools() {
		fmt.Printf("- %s: %s\n", t.Name(), t.Description())
	}
	// Output:
	// - get_invoice: Read an invoice.
	//
	// Input: one JSON object of this JSON Schema: {"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}
}
