package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
)

// Published documents, each in YAML and in JSON (../testdata/openapi/README.md): the YAML gives
// the operations the JSON gives, descriptions and argument schemas included.
func TestOperationsFromOpenAPIYAMLPublished(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		count int
		first client.Operation
	}{
		{"petstore-3.0", 20, client.Operation{Name: "updatePet", Method: "PUT", Path: "/pet"}},
		{"petstore-3.1", 20, client.Operation{Name: "updatePet", Method: "PUT", Path: "/pet"}},
		{"uspto", 3, client.Operation{Name: "list-data-sets", Method: "GET", Path: "/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			read := func(ext string) []client.Operation {
				b, err := os.ReadFile(filepath.Join("..", "testdata", "openapi", tc.name+ext))
				require.NoError(t, err)
				ops, err := client.OperationsFromOpenAPI(b)
				require.NoError(t, err, ext)
				return ops
			}
			fromYAML, fromJSON := read(".yaml"), read(".json")
			require.Len(t, fromYAML, tc.count)
			assert.Equal(t, tc.first, routing(fromYAML)[0])
			require.Equal(t, len(fromJSON), len(fromYAML))
			for i := range fromJSON {
				y, j := fromYAML[i], fromJSON[i]
				assert.JSONEq(t, string(j.Parameters), string(y.Parameters), j.Name)
				y.Parameters, j.Parameters = nil, nil
				assert.Equal(t, j, y)
			}
		})
	}
}

func TestOperationsFromOpenAPIYAML(t *testing.T) {
	t.Parallel()
	// Keys as written (a status, a version), anchors and merge keys, a quoted "true",
	// comments, a document marker: what YAML documents use and JSON has no word for.
	const doc = `---
# An orders API.
openapi: 3.1.0
info: {title: Orders, version: 1.0}
x-agent-errors:
  out_of_stock: {status: 409, retryable: false}
paths:
  /v1/orders/{id}:
    parameters:
      - &id {name: id, in: path, required: true, schema: {type: string}}
    get:
      operationId: getOrder
      summary: Read an order
      parameters:
        - {name: expand, in: query, schema: {type: string, enum: [items, "true"]}}
    post: &create
      operationId: replaceOrder
      x-idempotency-key: true
      x-agent-error-codes: [out_of_stock]
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                qty: {type: integer, maximum: 1_000, default: 0x10}
                at: {type: string, example: 2024-01-02}
      responses:
        200: {description: OK}
        409: {description: Taken}
  /v2/orders/{id}:
    parameters: [*id]
    post:
      <<: *create
      operationId: replaceOrderV2
      x-idempotency-key: required
`
	ops, err := client.OperationsFromOpenAPI([]byte(doc))
	require.NoError(t, err)
	require.Len(t, ops, 3)
	assert.Equal(t, []client.Operation{
		{Name: "getOrder", Method: "GET", Path: "/v1/orders/{id}", Query: []string{"expand"}},
		{Name: "replaceOrder", Method: "POST", Path: "/v1/orders/{id}", Keys: client.KeysHonoured},
		{Name: "replaceOrderV2", Method: "POST", Path: "/v2/orders/{id}", Keys: client.KeysHonoured},
	}, withKeys(ops))
	assert.Equal(t, "Read an order", ops[0].Description)
	assert.JSONEq(t, `{"type":"object","properties":{
		"id":{"type":"string"},"expand":{"type":"string","enum":["items","true"]}},
		"required":["id"]}`, string(ops[0].Parameters))
	assert.JSONEq(t, string(ops[1].Parameters), string(ops[2].Parameters), "the merge key brought the body")
	assert.Contains(t, string(ops[1].Parameters), `"at":{"example":"2024-01-02","type":"string"}`, "a timestamp stays the string written")
	assert.Contains(t, string(ops[1].Parameters), `"default":16`)
	require.Len(t, ops[2].Errors, 1)
	assert.Equal(t, 409, ops[2].Errors[0].Status, "status 409 read from a YAML integer key")
}

// withKeys is routing with Keys kept.
func withKeys(ops []client.Operation) []client.Operation {
	out := routing(ops)
	for i := range out {
		out[i].Keys = ops[i].Keys
	}
	return out
}

// A document that neither notation reads is an *OpenAPISyntaxError naming where.
func TestOperationsFromOpenAPISyntaxErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		doc          string
		format       string
		line, column int
		msg          string
	}{
		{"JSON", "{\"openapi\": \"3.1.0\",\n \"paths\": {]}", "JSON", 2, 12, "invalid character ']'"},
		{"YAML", "openapi: 3.1.0\npaths:\n  /a:\n    get: {operationId: [getA}\n", "YAML", 4, 0, "did not find expected"},
		{"YAML indentation", "openapi: 3.1.0\npaths:\n  /a:\n get: {}\n", "YAML", 4, 0, ""},
		{"a key that is a list", "openapi: 3.1.0\npaths:\n  ? [a, b]\n  : {}\n", "YAML", 3, 5, "not a scalar"},
		{"a key twice", "openapi: 3.1.0\npaths: {}\nopenapi: 3.0.0\n", "YAML", 3, 1, `"openapi" is already defined at line 1`},
		{"infinity", "openapi: 3.1.0\nx: .inf\n", "YAML", 2, 4, "no JSON equivalent"},
		{"an alias inside its anchor", "openapi: 3.1.0\nx: &a [1, *a]\n", "YAML", 2, 11, "inside the anchor"},
		{"two documents", "openapi: 3.1.0\n---\nopenapi: 3.0.0\n", "YAML", 2, 1, "a second YAML document"},
		{"a billion laughs", laughs(), "YAML", 0, 0, "expand to more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := client.OperationsFromOpenAPI([]byte(tc.doc))
			var syn *client.OpenAPISyntaxError
			require.ErrorAs(t, err, &syn)
			assert.Equal(t, tc.format, syn.Format)
			if tc.line > 0 {
				assert.Equal(t, tc.line, syn.Line, err.Error())
				assert.Equal(t, tc.column, syn.Column, err.Error())
			}
			assert.Contains(t, syn.Msg, tc.msg)
			assert.Contains(t, err.Error(), "not valid "+tc.format)
		})
	}
}

// laughs is a short YAML document whose aliases name 10^9 leaves.
func laughs() string {
	var b strings.Builder
	b.WriteString("openapi: 3.1.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// A path item may be a $ref: to #/components/pathItems (3.1) or anywhere in the document.
// What is written beside the $ref adds to the item referred to, which wins where both say.
func TestOperationsFromOpenAPIPathItemRef(t *testing.T) {
	t.Parallel()
	const doc = `openapi: 3.1.0
paths:
  /orders/{id}:
    $ref: '#/components/pathItems/Order'
  /v1/orders/{id}:
    $ref: '#/paths/~1orders~1%7Bid%7D'
    summary: the same, under /v1
  /alias/{id}:
    $ref: '#/components/pathItems/OrderAlias'
    parameters: [{name: note, in: query}]
    post: {operationId: aliasPost}
components:
  pathItems:
    OrderAlias: {$ref: '#/components/pathItems/Order'}
    Order:
      parameters: [{$ref: '#/components/parameters/Id'}]
      get: {parameters: [{name: expand, in: query}]}
      delete: {parameters: [{name: Idempotency-Key, in: header}]}
  parameters:
    Id: {name: id, in: path, required: true}
`
	ops, err := client.OperationsFromOpenAPI([]byte(doc))
	require.NoError(t, err)
	assert.Equal(t, []client.Operation{
		{Name: "get_alias_id", Method: "GET", Path: "/alias/{id}", Query: []string{"expand"}},
		{Name: "aliasPost", Method: "POST", Path: "/alias/{id}"},
		{Name: "delete_alias_id", Method: "DELETE", Path: "/alias/{id}", Keys: client.KeysHonoured},
		{Name: "get_orders_id", Method: "GET", Path: "/orders/{id}", Query: []string{"expand"}},
		{Name: "delete_orders_id", Method: "DELETE", Path: "/orders/{id}", Keys: client.KeysHonoured},
		{Name: "get_v1_orders_id", Method: "GET", Path: "/v1/orders/{id}", Query: []string{"expand"}},
		{Name: "delete_v1_orders_id", Method: "DELETE", Path: "/v1/orders/{id}", Keys: client.KeysHonoured},
	}, withKeys(ops))
	assert.JSONEq(t, `{"type":"object","properties":{"id":{},"expand":{}},"required":["id"]}`,
		string(ops[5].Parameters), "the path item's parameters come from the item referred to")
}

func TestOperationsFromOpenAPIExternalRef(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		"openapi: 3.1.0\npaths:\n  /a: {$ref: 'paths.yaml#/a'}\n",
		"openapi: 3.1.0\npaths:\n  /a: {$ref: 'https://example.com/api.yaml#/paths/~1a'}\n",
		"openapi: 3.1.0\npaths:\n  /a: {get: {parameters: [{$ref: 'common.yaml#/components/parameters/P'}]}}\n",
	} {
		_, err := client.OperationsFromOpenAPI([]byte(doc))
		require.ErrorIs(t, err, client.ErrExternalRef, doc)
		assert.Contains(t, err.Error(), "bundle the document into one file")
	}
}

// LoadOpenAPI reads a YAML document, whatever media type it is served with.
func TestClientLoadOpenAPIYAML(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "testdata", "openapi", "petstore-3.0.yaml"))
	require.NoError(t, err)
	for _, ct := range []string{"application/yaml", "application/x-yaml", "text/plain; charset=utf-8", "application/json", ""} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			assert.Contains(t, r.Header.Get("Accept"), "application/yaml")
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			io.WriteString(w, string(doc))
		}))
		c, err := client.New(client.WithBaseURL(srv.URL), client.WithHTTPClient(srv.Client()))
		require.NoError(t, err)
		n, err := c.LoadOpenAPI(t.Context(), "/openapi.yaml")
		srv.Close()
		require.NoError(t, err, ct)
		assert.Equal(t, 20, n, ct)
	}
}
