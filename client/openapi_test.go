package client_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/remedy-go/remedy/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ordersDoc is an OpenAPI 3.1 document as they come: parameters at the path item and at the
// operation, a $ref (one with a name that needs JSON Pointer escaping), header and cookie
// parameters, an operation without an operationId, and path parameters declared where the
// template has none and vice versa.
const ordersDoc = `{
  "openapi": "3.1.0",
  "info": {"title": "Orders", "version": "1.4.0"},
  "servers": [{"url": "https://api.example.com"}],
  "paths": {
    "/v1/orders/{id}": {
      "summary": "One order",
      "parameters": [
        {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
        {"name": "expand", "in": "query", "schema": {"type": "string"}}
      ],
      "get": {"operationId": "getOrder", "responses": {"200": {"description": "the order"}}},
      "patch": {
        "operationId": "updateOrder",
        "parameters": [
          {"name": "expand", "in": "query", "description": "overrides the path item's"},
          {"name": "session", "in": "cookie"},
          {"name": "X-Request-Id", "in": "header"}
        ],
        "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
        "responses": {"200": {"description": "the order"}}
      },
      "delete": {
        "operationId": "cancelOrder",
        "parameters": [{"name": "reason", "in": "query"}],
        "responses": {"204": {"description": "cancelled"}}
      },
      "x-internal": true
    },
    "/v1/orders": {
      "get": {
        "operationId": "listOrders",
        "parameters": [
          {"$ref": "#/components/parameters/Limit"},
          {"name": "status", "in": "query", "schema": {"enum": ["open", "shipped"]}},
          {"name": "Idempotency-Key", "in": "header"}
        ],
        "responses": {"200": {"description": "a page"}}
      },
      "post": {
        "operationId": "createOrder",
        "parameters": [{"name": "dry_run", "in": "query", "schema": {"type": "boolean"}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}},
        "responses": {"201": {"description": "created"}}
      }
    },
    "/v1/orders/{order-id}/items": {
      "parameters": [{"name": "order-id", "in": "path", "required": true}],
      "put": {
        "parameters": [{"$ref": "#/components/parameters/api~1version~0v"}],
        "responses": {"200": {"description": "replaced"}}
      }
    },
    "/v1/orders/{id}/ship": {
      "post": {
        "operationId": "shipOrder",
        "parameters": [
          {"name": "carrier", "in": "path", "required": true},
          {"name": "id", "in": "query"}
        ],
        "responses": {"200": {"description": "shipped"}}
      }
    }
  },
  "components": {
    "schemas": {"Order": {"type": "object"}},
    "parameters": {
      "Limit": {"$ref": "#/components/parameters/PageSize"},
      "PageSize": {"name": "limit", "in": "query", "schema": {"type": "integer"}},
      "api/version~v": {"name": "version", "in": "query"}
    }
  }
}`

// routing keeps of each operation what the loop sends it by, leaving out what a model is told.
func routing(ops []client.Operation) []client.Operation {
	if ops == nil {
		return nil
	}
	out := make([]client.Operation, len(ops))
	for i, op := range ops {
		out[i] = client.Operation{Name: op.Name, Method: op.Method, Path: op.Path, Query: op.Query}
	}
	return out
}

func TestOperationsFromOpenAPI(t *testing.T) {
	t.Parallel()
	ops, err := client.OperationsFromOpenAPI([]byte(ordersDoc))
	require.NoError(t, err)
	assert.Equal(t, []client.Operation{
		{Name: "listOrders", Method: "GET", Path: "/v1/orders", Query: []string{"limit", "status"}},
		{Name: "createOrder", Method: "POST", Path: "/v1/orders", Query: []string{"dry_run"}},
		{Name: "getOrder", Method: "GET", Path: "/v1/orders/{id}", Query: []string{"expand"}},
		{Name: "cancelOrder", Method: "DELETE", Path: "/v1/orders/{id}", Query: []string{"expand", "reason"}},
		{Name: "updateOrder", Method: "PATCH", Path: "/v1/orders/{id}", Query: []string{"expand"}},
		// A declared path parameter the template lacks goes to the body; a query parameter
		// the template names stays in the path.
		{Name: "shipOrder", Method: "POST", Path: "/v1/orders/{id}/ship"},
		{Name: "put_v1_orders_order_id_items", Method: "PUT", Path: "/v1/orders/{order-id}/items", Query: []string{"version"}},
	}, routing(ops))

	again, err := client.OperationsFromOpenAPI([]byte(ordersDoc))
	require.NoError(t, err)
	assert.Equal(t, ops, again, "the order does not depend on map iteration")
}

func TestOperationsFromOpenAPIAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		doc  string
		want []client.Operation
	}{
		{"3.0 without paths", `{"openapi":"3.0.3","info":{}}`, nil},
		{"null paths", `{"openapi":"3.1.0","paths":null}`, nil},
		{"byte order mark and whitespace", "\xef\xbb\xbf \n\t{\"openapi\":\"3.1.1\",\"paths\":{\"/\":{\"get\":{}}}}", []client.Operation{
			{Name: "get", Method: "GET", Path: "/"},
		}},
		{"derived names", `{"openapi":"3.0.0","paths":{
			"/v1/orders/{order-id}":{"get":{},"head":{"operationId":""}},
			"/Users/{userID}/Photos.json":{"trace":{}},
			"/café/{x}.json":{"options":{}}}}`, []client.Operation{
			{Name: "trace_users_userid_photos_json", Method: "TRACE", Path: "/Users/{userID}/Photos.json"},
			{Name: "options_caf___x__json", Method: "OPTIONS", Path: "/café/{x}.json"},
			{Name: "get_v1_orders_order_id", Method: "GET", Path: "/v1/orders/{order-id}"},
			{Name: "head_v1_orders_order_id", Method: "HEAD", Path: "/v1/orders/{order-id}"},
		}},
		{"members that are not methods", `{"openapi":"3.1.0","paths":{"/a":{
			"GET":{"operationId":"upper"},"query":{},"x-get":{},"servers":[],"get":null,"post":{"operationId":"p"}}}}`,
			[]client.Operation{{Name: "p", Method: "POST", Path: "/a"}}},
		{"parameters without a name or location", `{"openapi":"3.1.0","paths":{"/a":{"get":{"parameters":[
			{"in":"query"},{"name":"x"},{"name":"q","in":"query"},{"name":"q","in":"query"}]}}}}`,
			[]client.Operation{{Name: "get_a", Method: "GET", Path: "/a", Query: []string{"q"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ops, err := client.OperationsFromOpenAPI([]byte(tc.doc))
			require.NoError(t, err)
			assert.Equal(t, tc.want, routing(ops))
		})
	}
}

func TestOperationsFromOpenAPIRefuses(t *testing.T) {
	t.Parallel()
	doc := func(paths string) string { return `{"openapi":"3.1.0","paths":` + paths + `}` }
	withParam := func(param string) string {
		return `{"openapi":"3.1.0","paths":{"/a":{"get":{"operationId":"getA","parameters":[` + param + `]}}},
			"components":{"parameters":{"A":{"$ref":"#/components/parameters/B"},"B":{"$ref":"#/components/parameters/A"},
			"ok":{"name":"ok","in":"query"}},"schemas":{"S":{"type":"string"}}}}`
	}
	for _, tc := range []struct {
		name string
		doc  string
		want []string // each in the message
	}{
		{"empty", ``, []string{"the document is empty"}},
		{"not JSON", "{\"openapi\":\"3.1.0\",\n \"paths\": {]}", []string{"not valid JSON", "line 2, column 12"}},
		{"trailing garbage", `{"openapi":"3.1.0"} x`, []string{"not valid JSON"}},
		{"a YAML flow mapping", `{openapi: 3}`, []string{"openapi member is \"3\"", "not a version string"}},
		{"not YAML", "openapi: 3.1.0\npaths:\n  /a: {get: {}\n", []string{"not valid YAML", "line "}},
		{"a JSON array", `[{"openapi":"3.1.0"}]`, []string{"must be one object", "YAML"}},
		{"a YAML string", "just words\n", []string{"must be one object", "YAML"}},
		{"Swagger 2.0", `{"swagger":"2.0","info":{},"paths":{}}`, []string{`Swagger "2.0"`, "only OpenAPI 3.x"}},
		{"no openapi member", `{"info":{},"paths":{}}`, []string{"no openapi member", "only OpenAPI 3.x"}},
		{"openapi 2", `{"openapi":"2.0.0","paths":{}}`, []string{`OpenAPI "2.0.0"`, "only OpenAPI 3.x"}},
		{"openapi 30", `{"openapi":"30.1","paths":{}}`, []string{`OpenAPI "30.1"`}},
		{"openapi a number", `{"openapi":3.1,"paths":{}}`, []string{`"3.1"`, "not a version string"}},
		{"paths an array", doc(`[]`), []string{"paths is not an object"}},
		{"path without a slash", doc(`{"orders":{"get":{}}}`), []string{`path "orders" must start with /`}},
		{"unbalanced braces", doc(`{"/a/{id":{"get":{}}}`), []string{`"/a/{id"`, "unclosed {"}},
		{"path item $ref to nothing", doc(`{"/a":{"$ref":"#/components/pathItems/A"}}`),
			[]string{`path item "/a"`, `$ref "#/components/pathItems/A"`, "nothing there"}},
		{"path item $ref to another document", doc(`{"/a":{"$ref":"paths.yaml#/a"}}`),
			[]string{`path item "/a"`, `"paths.yaml#/a"`, "another document", "bundle"}},
		{"path item $ref cycle", `{"openapi":"3.1.0","paths":{"/a":{"$ref":"#/components/pathItems/A"}},
			"components":{"pathItems":{"A":{"$ref":"#/components/pathItems/B"},"B":{"$ref":"#/components/pathItems/A"}}}}`,
			[]string{`path item "/a"`, "cycle"}},
		{"path item $ref to a string", `{"openapi":"3.1.0","paths":{"/a":{"$ref":"#/info/title"}},"info":{"title":"t"}}`,
			[]string{`path item "/a"`, "not an object"}},
		{"operation not an object", doc(`{"/a":{"get":[]}}`), []string{"operation GET /a is not an object"}},
		{"operationId a number", doc(`{"/a":{"get":{"operationId":7}}}`), []string{"GET /a", "operationId is not a string"}},
		{"duplicate operationId", doc(`{"/b":{"post":{"operationId":"x"}},"/a":{"get":{"operationId":"x"}}}`),
			[]string{`operationId "x" is used by both GET /a and POST /b`}},
		{"operationId taken by a derived name", doc(`{"/a":{"get":{}},"/b":{"get":{"operationId":"get_a"}}}`),
			[]string{`operationId "get_a" is used by both GET /a and GET /b`}},
		{"parameters not an array", doc(`{"/a":{"get":{"operationId":"getA","parameters":{}}}}`),
			[]string{`operation "getA" (GET /a)`, "parameters is not an array"}},
		{"bad path-item parameter", doc(`{"/a":{"parameters":[7],"get":{"operationId":"getA"}}}`),
			[]string{`operation "getA" (GET /a)`, "the path item's parameters[0]", "not an object"}},
		{"parameter name a number", withParam(`{"name":1,"in":"query"}`), []string{`operation "getA"`, "name is not a string"}},
		{"$ref a number", withParam(`{"$ref":1}`), []string{`operation "getA"`, "$ref is not a string"}},
		{"$ref to another document", withParam(`{"$ref":"common.json#/components/parameters/ok"}`),
			[]string{`operation "getA" (GET /a)`, `"common.json#/components/parameters/ok"`, "another document", "bundle"}},
		{"$ref to a schema", withParam(`{"$ref":"#/components/schemas/S"}`), []string{`operation "getA"`, "#/components/parameters/<name>"}},
		{"$ref below a parameter", withParam(`{"$ref":"#/components/parameters/ok/name"}`), []string{`operation "getA"`, "#/components/parameters/<name>"}},
		{"$ref to nothing", withParam(`{"$ref":"#/components/parameters/Nope"}`), []string{`operation "getA"`, `has no "Nope"`}},
		{"$ref with a bad escape", withParam(`{"$ref":"#/components/parameters/o~2k"}`), []string{`operation "getA"`, "followed by 0 or 1"}},
		{"$ref cycle", withParam(`{"$ref":"#/components/parameters/A"}`), []string{`operation "getA"`, "cycle"}},
		{"$ref without components", `{"openapi":"3.1.0","paths":{"/a":{"get":{"operationId":"getA","parameters":[{"$ref":"#/components/parameters/ok"}]}}}}`,
			[]string{`operation "getA"`, `has no "ok"`}},
		{"components not an object", `{"openapi":"3.1.0","components":[],"paths":{"/a":{"get":{"operationId":"getA","parameters":[{"$ref":"#/components/parameters/ok"}]}}}}`,
			[]string{`operation "getA"`, "components is not an object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ops, err := client.OperationsFromOpenAPI([]byte(tc.doc))
			require.Error(t, err)
			assert.Nil(t, ops)
			assert.True(t, strings.HasPrefix(err.Error(), "remedy: OpenAPI: "), err.Error())
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// openAPIServer is a real HTTP server on 127.0.0.1 that serves a document at
// <prefix>/openapi.json and records every other request.
type openAPIServer struct {
	*httptest.Server
	mu     sync.Mutex
	docReq *http.Request
	reqs   []openAPIRec
}

type openAPIRec struct {
	Method, RawPath, Query, Body string
}

func newOpenAPIServer(t *testing.T, prefix, doc string) *openAPIServer {
	t.Helper()
	s := &openAPIServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == prefix+"/openapi.json" {
			s.docReq = r.Clone(r.Context())
			io.WriteString(w, doc)
			return
		}
		s.reqs = append(s.reqs, openAPIRec{Method: r.Method, RawPath: r.URL.EscapedPath(), Query: r.URL.RawQuery, Body: string(body)})
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *openAPIServer) documentRequest() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docReq
}

func (s *openAPIServer) Requests() []openAPIRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func TestClientLoadOpenAPI(t *testing.T) {
	t.Parallel()
	srv := newOpenAPIServer(t, "", ordersDoc)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithHTTPClient(srv.Client()))
	require.NoError(t, err)
	ctx := t.Context()

	n, err := c.LoadOpenAPI(ctx, "/openapi.json")
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	docReq := srv.documentRequest()
	require.NotNil(t, docReq)
	assert.Equal(t, "GET", docReq.Method)
	accept := docReq.Header.Get("Accept")
	assert.True(t, strings.HasPrefix(accept, "application/json,"), accept)
	assert.Contains(t, accept, "application/yaml")

	for _, call := range []struct {
		op   string
		args map[string]any
		want openAPIRec
	}{
		{"getOrder", map[string]any{"id": "o 1", "expand": "items"},
			openAPIRec{"GET", "/v1/orders/o%201", "expand=items", ""}},
		{"updateOrder", map[string]any{"id": "o/2", "expand": "items", "note": "rush"},
			openAPIRec{"PATCH", "/v1/orders/o%2F2", "expand=items", `{"note":"rush"}`}},
		{"cancelOrder", map[string]any{"id": "o3", "reason": "late"},
			openAPIRec{"DELETE", "/v1/orders/o3", "reason=late", ""}},
		{"listOrders", map[string]any{"limit": 10, "status": "open"},
			openAPIRec{"GET", "/v1/orders", "limit=10&status=open", ""}},
		{"createOrder", map[string]any{"dry_run": true, "qty": 2, "sku": "abc"},
			openAPIRec{"POST", "/v1/orders", "dry_run=true", `{"qty":2,"sku":"abc"}`}},
		{"createOrder", map[string]any{"sku": "abc"},
			openAPIRec{"POST", "/v1/orders", "", `{"sku":"abc"}`}},
		{"shipOrder", map[string]any{"id": "o4", "carrier": "ups"},
			openAPIRec{"POST", "/v1/orders/o4/ship", "", `{"carrier":"ups"}`}},
		{"put_v1_orders_order_id_items", map[string]any{"order-id": "o5", "version": 3, "items": []string{"a"}},
			openAPIRec{"PUT", "/v1/orders/o5/items", "version=3", `{"items":["a"]}`}},
	} {
		resp, err := c.Call(ctx, call.op, call.args)
		require.NoError(t, err, call.op)
		assert.Equal(t, 200, resp.Status, call.op)
		reqs := srv.Requests()
		require.NotEmpty(t, reqs)
		assert.Equal(t, call.want, reqs[len(reqs)-1], call.op)
	}

	t.Run("relative to a base URL with a path", func(t *testing.T) {
		t.Parallel()
		srv := newOpenAPIServer(t, "/api", `{"openapi":"3.0.3","servers":[{"url":"/api"}],
			"paths":{"/ping":{"get":{"operationId":"ping"}}}}`)
		c, err := client.New(client.WithBaseURL(srv.URL+"/api/"), client.WithHTTPClient(srv.Client()))
		require.NoError(t, err)
		n, err := c.LoadOpenAPI(t.Context(), "openapi.json")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		_, err = c.Call(t.Context(), "ping", nil)
		require.NoError(t, err)
		assert.Equal(t, []openAPIRec{{Method: "GET", RawPath: "/api/ping"}}, srv.Requests())
	})

	t.Run("absolute without a base URL: refused, nothing fetched", func(t *testing.T) {
		t.Parallel()
		srv := newOpenAPIServer(t, "", ordersDoc)
		c, err := client.New(client.WithHTTPClient(srv.Client()))
		require.NoError(t, err)
		_, err = c.LoadOpenAPI(t.Context(), srv.URL+"/openapi.json")
		require.ErrorContains(t, err, "no base URL")
		assert.Empty(t, srv.Requests(), "the operations would have nowhere to go: the document is not fetched")
	})
}

func TestClientLoadOpenAPIRefuses(t *testing.T) {
	t.Parallel()
	const limit = 8 << 20
	small := `{"openapi":"3.1.0","paths":{"/a":{"get":{"operationId":"getA"}}}}`
	padded := func(n int) string { return small + strings.Repeat(" ", n-len(small)) }
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    []string
	}{
		{"a 500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, []string{"status 500 Internal Server Error", "/openapi.json"}},
		{"a 404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, []string{"status 404 Not Found"}},
		{"larger than 8 MiB, with a Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(limit+1))
			io.WriteString(w, padded(limit+1))
		}, []string{"larger than the 8 MiB limit"}},
		{"larger than 8 MiB, chunked", func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			io.WriteString(w, padded(limit+1))
		}, []string{"larger than the 8 MiB limit"}},
		{"a Swagger 2.0 document", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"swagger":"2.0","paths":{}}`)
		}, []string{"/openapi.json", "only OpenAPI 3.x"}},
		{"YAML that is not valid", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "openapi: 3.1.0\npaths:\n  /a:\n    get: {operationId: [getA}\n")
		}, []string{"/openapi.json", "not valid YAML", "line 4"}},
		{"neither, served as YAML", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/yaml")
			io.WriteString(w, `{"openapi": "3.1.0", paths: {`)
		}, []string{"not valid YAML"}},
		{"neither, served as JSON", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"openapi": "3.1.0", paths: {`)
		}, []string{"not valid JSON", "line 1, column 22"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.handler)
			t.Cleanup(srv.Close)
			c, err := client.New(client.WithBaseURL(srv.URL), client.WithHTTPClient(srv.Client()))
			require.NoError(t, err)
			n, err := c.LoadOpenAPI(t.Context(), "/openapi.json")
			require.Error(t, err)
			assert.Zero(t, n)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			_, err = c.Call(t.Context(), "getA", nil)
			assert.ErrorContains(t, err, "not registered", "nothing was registered")
		})
	}

	t.Run("exactly 8 MiB is read", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, padded(limit))
		}))
		t.Cleanup(srv.Close)
		c, err := client.New(client.WithBaseURL(srv.URL), client.WithHTTPClient(srv.Client()))
		require.NoError(t, err)
		n, err := c.LoadOpenAPI(t.Context(), "/openapi.json")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	})

	t.Run("a relative URL without a base URL", func(t *testing.T) {
		t.Parallel()
		c, err := client.New()
		require.NoError(t, err)
		_, err = c.LoadOpenAPI(t.Context(), "/openapi.json")
		assert.ErrorContains(t, err, "no base URL")
	})

	t.Run("not an http URL", func(t *testing.T) {
		t.Parallel()
		c, err := client.New(client.WithBaseURL("http://127.0.0.1:1"))
		require.NoError(t, err)
		_, err = c.LoadOpenAPI(t.Context(), "file:///etc/openapi.json")
		assert.ErrorContains(t, err, "not an http(s) URL")
		_, err = c.LoadOpenAPI(t.Context(), "http://[::1")
		assert.ErrorContains(t, err, "OpenAPI document URL")
	})
}

// FuzzOperationsFromOpenAPI checks that no document panics the reader, and that what it
// accepts can be registered: a name, a path under "/", an operation method.
func FuzzOperationsFromOpenAPI(f *testing.F) {
	f.Add([]byte(ordersDoc))
	f.Add([]byte(`{"openapi":"3.1.0","paths":{"/":{"get":{}},"/a/{b}":{"post":{"parameters":[{"$ref":"#/components/parameters/x~1y"}]}}},"components":{"parameters":{"x/y":{"name":"q","in":"query"}}}}`))
	f.Add([]byte(`{"openapi":"3.0.0","paths":{"/a":{"parameters":[{"$ref":"#/components/parameters/A"}],"get":{}}},"components":{"parameters":{"A":{"$ref":"#/components/parameters/A"}}}}`))
	f.Add([]byte(`{"swagger":"2.0"}`))
	f.Add([]byte("openapi: 3.1.0\n"))
	f.Add([]byte("openapi: 3.1.0\npaths:\n  /a: &a\n    get: {operationId: a}\n  /b:\n    <<: *a\n    post: {}\n  /c: {$ref: '#/components/pathItems/C'}\ncomponents:\n  pathItems:\n    C: {delete: {}}\n"))
	f.Add([]byte("openapi: 3.1.0\npaths:\n  /a: {$ref: '#/paths/~1b'}\n  /b: {$ref: '#/paths/~1a'}\n  /c: &c [*c]\n"))
	f.Add([]byte(`{"openapi":"3.1.0","paths":{"/{":{"get":{}},"x":{}}}`))
	valid := []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}
	f.Fuzz(func(t *testing.T, doc []byte) {
		ops, err := client.OperationsFromOpenAPI(doc)
		if err != nil {
			require.Nil(t, ops)
			return
		}
		c, err := client.New(client.WithBaseURL("http://127.0.0.1:1"))
		require.NoError(t, err)
		for i, op := range ops {
			require.NotEmpty(t, op.Name)
			require.True(t, strings.HasPrefix(op.Path, "/"), op.Path)
			require.Contains(t, valid, op.Method)
			require.NoError(t, c.Register(op))
			if i > 0 {
				prev := ops[i-1]
				require.True(t, prev.Path < op.Path || prev.Path == op.Path &&
					slices.Index(valid, prev.Method) < slices.Index(valid, op.Method), "sorted: %v before %v", prev, op)
			}
		}
	})
}

// The same reader runs on a document the test does not hold in a constant: it stays total on
// sizes that a fuzzer seldom reaches.
func TestOperationsFromOpenAPIManyPaths(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"openapi":"3.1.0","paths":{`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/r%04d/{id}":{"get":{},"delete":{"operationId":"del%d"}}`, 999-i, i)
	}
	b.WriteString(`}}`)
	ops, err := client.OperationsFromOpenAPI([]byte(b.String()))
	require.NoError(t, err)
	require.Len(t, ops, 2000)
	assert.Equal(t, client.Operation{Name: "get_r0000_id", Method: "GET", Path: "/r0000/{id}"}, routing(ops)[0])
	assert.Equal(t, client.Operation{Name: "del999", Method: "DELETE", Path: "/r0000/{id}"}, routing(ops)[1])
}

// References that fan out at every level are inlined within a budget, not exponentially.
func TestOperationsFromOpenAPIInlinesWithinABudget(t *testing.T) {
	t.Parallel()
	var schemas []string
	for i := range 20 {
		next := fmt.Sprintf(`{"$ref":"#/components/schemas/S%d"}`, i+1)
		schemas = append(schemas, fmt.Sprintf(`"S%d":{"type":"object","properties":{"a":%s,"b":%s,"c":%s,"d":%s}}`, i, next, next, next, next))
	}
	doc := `{"openapi":"3.1.0","paths":{"/x":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S0"}}}}}}},` +
		`"components":{"schemas":{` + strings.Join(schemas, ",") + `,"S20":{"type":"string"}}}}`
	ops, err := client.OperationsFromOpenAPI([]byte(doc))
	require.NoError(t, err)
	require.Len(t, ops, 1)
	assert.Less(t, len(ops[0].Parameters), 4<<20, "4^20 nodes were not written out")
	var schema map[string]any
	require.NoError(t, json.Unmarshal(ops[0].Parameters, &schema))
	assert.Equal(t, "object", schema["type"])
}

// An operation declares that it honours idempotency keys with an Idempotency-Key header
// parameter (any case, at the path item or the operation, inline or through $refs) or with
// x-idempotency-key on the operation (true, "optional", "required", as the reference server
// writes it). Nothing else declares it.
func TestOperationsFromOpenAPIKeys(t *testing.T) {
	t.Parallel()
	const doc = `{
  "openapi": "3.1.0",
  "paths": {
    "/inline": {"post": {"operationId": "inline", "parameters": [{"name": "Idempotency-Key", "in": "header"}]}},
    "/lower": {"post": {"operationId": "lower", "parameters": [{"name": "idempotency-key", "in": "header", "required": true}]}},
    "/ref": {"post": {"operationId": "ref", "parameters": [{"$ref": "#/components/parameters/Key"}]}},
    "/refchain": {"post": {"operationId": "refchain", "parameters": [{"$ref": "#/components/parameters/KeyAlias"}]}},
    "/item": {
      "parameters": [{"name": "Idempotency-Key", "in": "header"}],
      "post": {"operationId": "item"}
    },
    "/optional": {"post": {"operationId": "optional", "x-idempotency-key": "optional"}},
    "/required": {"post": {"operationId": "required", "x-idempotency-key": "Required"}},
    "/true": {"post": {"operationId": "true", "x-idempotency-key": true}},
    "/false": {"post": {"operationId": "false", "x-idempotency-key": false}},
    "/none": {"post": {"operationId": "none", "x-idempotency-key": "none"}},
    "/object": {"post": {"operationId": "object", "x-idempotency-key": {"header": "Idempotency-Key"}}},
    "/xheader": {"post": {"operationId": "xheader", "parameters": [{"name": "X-Idempotency-Key", "in": "header"}]}},
    "/query": {"post": {"operationId": "query", "parameters": [{"name": "Idempotency-Key", "in": "query"}]}},
    "/itemext": {"x-idempotency-key": "required", "post": {"operationId": "itemext"}},
    "/plain": {"post": {"operationId": "plain"}}
  },
  "components": {"parameters": {
    "Key": {"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}},
    "KeyAlias": {"$ref": "#/components/parameters/Key"}
  }}
}`
	ops, err := client.OperationsFromOpenAPI([]byte(doc))
	require.NoError(t, err)
	got := map[string]client.KeySupport{}
	for _, op := range ops {
		got[op.Name] = op.Keys
	}
	h, u := client.KeysHonoured, client.KeysUnknown
	assert.Equal(t, map[string]client.KeySupport{
		"inline": h, "lower": h, "ref": h, "refchain": h, "item": h,
		"optional": h, "required": h, "true": h,
		"false": u, "none": u, "object": u,
		"xheader": u, // not the header the loop sends
		"query":   u,
		"itemext": u, // the extension is read on the operation only
		"plain":   u,
	}, got)
}
