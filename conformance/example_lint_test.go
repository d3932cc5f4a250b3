package conformance_test

import (
	"fmt"

	"github.com/remedy-go/remedy/conformance"
)

func ExampleLint() {
	doc := []byte(`{
	  "openapi": "3.1.0",
	  "info": {"title": "notes", "version": "1.0.0"},
	  "paths": {
	    "/notes": {
	      "post": {
	        "operationId": "create_note",
	        "x-agent-error-codes": ["invalid_body", "internal_error"],
	        "x-ax-idempotent": false,
	        "x-ax-retryable": false,
	        "responses": {
	          "201": {"description": "Created."},
	          "422": {"description": "Invalid.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
	          "500": {"description": "Failed.", "content": {"text/html": {}}}
	        }
	      }
	    },
	    "/notes/{id}": {
	      "delete": {
	        "operationId": "delete_note",
	        "x-agent-error-codes": ["not_found"],
	        "x-ax-idempotent": true,
	        "x-ax-retryable": true,
	        "responses": {
	          "204": {"description": "Deleted."},
	          "404": {"description": "No such note.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
	          "default": {"description": "Failed.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
	        }
	      }
	    }
	  },
	  "components": {"schemas": {"Error": {"type": "object"}}}
	}`)
	report := conformance.Lint(doc)
	for _, res := range report.Results {
		if res.Outcome != conformance.Pass {
			fmt.Printf("%s %s: %s\n", res.Outcome, res.ID, res.Detail)
		}
	}
	fmt.Println("failed:", report.Failed())
	// Output:
	// fail lint-error-responses: POST /notes (create_note): response 500: no JSON content, only text/html
	// skip lint-idempotency-key: no operation accepts an Idempotency-Key (header parameter or x-idempotency-key), and no POST or PATCH says x-ax-idempotent: true
	// fail lint-confirmation: DELETE /notes/{id} (delete_note): a DELETE that does not state x-confirmation-required
	// skip lint-retry-after: no 429 or 503 response is documented
	// failed: [lint-error-responses lint-confirmation]
}
