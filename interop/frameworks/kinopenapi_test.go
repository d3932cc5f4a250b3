package frameworks

import (
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	middleware "github.com/oapi-codegen/nethttp-middleware"

	"github.com/remedy-go/remedy"
)

// itemsSpec is the OpenAPI 3 document the OpenAPI-driven apps serve: the same item as the Go
// structs (an enum, a maximum, required members, lines whose items require a SKU) and a query
// parameter with a maximum.
const itemsSpec = `{
  "openapi": "3.0.3",
  "info": {"title": "items", "version": "1"},
  "paths": {
    "/items": {
      "post": {
        "operationId": "createItem",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CreateItem"}}}},
        "responses": {"201": {"description": "created"}}
      },
      "get": {
        "operationId": "listItems",
        "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}}],
        "responses": {"200": {"description": "the items"}}
      }
    }
  },
  "components": {
    "schemas": {
      "CreateItem": {
        "type": "object",
        "required": ["sku", "currency", "quantity"],
        "properties": {
          "sku": {"type": "string"},
          "currency": {"type": "string", "enum": ["usd", "eur"]},
          "quantity": {"type": "integer", "maximum": 100},
          "lines": {"type": "array", "items": {"$ref": "#/components/schemas/Line"}}
        }
      },
      "Line": {
        "type": "object",
        "required": ["sku"],
        "properties": {
          "sku": {"type": "string"},
          "quantity": {"type": "integer", "maximum": 100}
        }
      }
    }
  }
}`

// kinOpenAPIApp is oapi-codegen's net/http middleware (OapiRequestValidator, kin-openapi's
// validation) on itemsSpec, in front of a handler that accepts what gets through.
func kinOpenAPIApp(t *testing.T) http.Handler {
	t.Helper()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(itemsSpec))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/items", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	return middleware.OapiRequestValidator(spec)(mux)
}

// TestKinOpenAPI records kin-openapi's request validation as oapi-codegen's net/http
// middleware writes it by default (OapiRequestValidator, http.Error: text/plain, the first
// line of the error). kin-openapi states the member as a JSON Pointer, the bound, the allowed
// values as JSON, a missing member's name, and a parameter's name and place.
func TestKinOpenAPI(t *testing.T) {
	base := serve(t, kinOpenAPIApp(t))
	const d = remedy.DialectUnstructured
	run(t, base, []recording{
		{name: "kin-openapi-enum", dialect: d, req: post("/items", enumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/currency", code: "enum", allowed: []string{`"usd"`, `"eur"`}}}}},
		{name: "kin-openapi-maximum", dialect: d, req: post("/items", maximumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", code: "maximum", expected: `{"maximum":100}`}}}},
		{name: "kin-openapi-required", dialect: d, req: post("/items", requiredBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/sku", code: "required"}}}},
		{name: "kin-openapi-type", dialect: d, req: post("/items", typeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", code: "type", expected: `"integer"`}}}},
		{name: "kin-openapi-nested-required", dialect: d, req: post("/items", nestedBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/lines/1/sku", code: "required"}}}},
		{name: "kin-openapi-query-maximum", dialect: d, req: get("/items?limit=500"),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/limit", code: "maximum", expected: `{"maximum":100}`}}}},
		{name: "kin-openapi-query-type", dialect: d, req: get("/items?limit=ten"),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/limit", code: "type", expected: `"integer"`, received: `"ten"`}}}},
		{name: "kin-openapi-invalid-json", dialect: d, req: post("/items", syntaxBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "invalid_json"}}}},
		{name: "kin-openapi-not-found", dialect: d, req: get("/nope"),
			want: want{status: 404, code: "not_found"}},
	})
}
