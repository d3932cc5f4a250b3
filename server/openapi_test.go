package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
)

// billingServer serves the billing API on loopback.
func billingServer(t *testing.T, opts ...server.Option) (*server.API, *billing.Store, *httptest.Server) {
	t.Helper()
	api, store, err := billing.New(opts...)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, store, srv
}

// loadOpenAPI fetches the served document and loads it with kin-openapi, which validates it.
func loadOpenAPI(t *testing.T, url string) (*openapi3.T, []byte) {
	t.Helper()
	status, h, body := do(t, "GET", url+"/openapi.json", "", "")
	require.Equal(t, 200, status, "%s", body)
	require.Equal(t, "application/json", h.Get("Content-Type"))
	doc, err := openapi3.NewLoader().LoadFromData(body)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()), "the document is valid OpenAPI")
	return doc, body
}

func TestOpenAPIDocumentIsValidAndComplete(t *testing.T) {
	t.Parallel()
	api, _, srv := billingServer(t, server.WithAuthenticator(byBearer), server.WithRateLimit(server.RateLimitOptions{PerSecond: 100, Burst: 100}))
	doc, raw := loadOpenAPI(t, srv.URL)
	assert.Equal(t, "3.1.0", doc.OpenAPI)
	assert.Equal(t, "billing", doc.Info.Title)
	assert.Equal(t, "1.0.0", doc.Info.Version)

	var all []string
	require.NoError(t, json.Unmarshal(extension(t, doc.Extensions, "x-agent-error-codes"), &all))
	var catalog map[string]struct {
		Status    int    `json:"status"`
		Retryable bool   `json:"retryable"`
		Severity  string `json:"severity"`
	}
	require.NoError(t, json.Unmarshal(extension(t, doc.Extensions, "x-agent-errors"), &catalog))
	for _, code := range all {
		c, ok := api.Registry().Lookup(code)
		require.True(t, ok, code)
		want := string(c.Severity)
		if want == "" {
			want = "error"
		}
		assert.Equal(t, c.Status, catalog[code].Status, code)
		assert.Equal(t, c.Retryable, catalog[code].Retryable, code)
		assert.Equal(t, want, catalog[code].Severity, code)
	}
	for _, op := range api.Operations() {
		t.Run(op.ID, func(t *testing.T) {
			item := doc.Paths.Find(op.Path)
			require.NotNil(t, item, "path %s", op.Path)
			o := item.GetOperation(op.Method)
			require.NotNil(t, o, "%s %s", op.Method, op.Path)
			assert.Equal(t, op.ID, o.OperationID)
			assert.Equal(t, op.Summary, o.Summary)

			// Every code the operation may emit: in its list, in the catalog, and under a
			// response of its status that points at the envelope schema.
			var listed []string
			require.NoError(t, json.Unmarshal(extension(t, o.Extensions, "x-agent-error-codes"), &listed))
			emits := api.Emits(op)
			require.NotEmpty(t, emits)
			for _, c := range emits {
				assert.Contains(t, listed, c.Code)
				assert.Contains(t, all, c.Code)
				resp := o.Responses.Status(c.Status)
				require.NotNil(t, resp, "no %d response for %s", c.Status, c.Code)
				assert.Contains(t, *resp.Value.Description, "`"+c.Code+"`")
				mt := resp.Value.Content.Get("application/json")
				require.NotNil(t, mt)
				assert.Equal(t, "#/components/schemas/Envelope", mt.Schema.Ref)
				assert.NotNil(t, resp.Value.Content.Get("application/problem+json"))
			}
			for _, code := range op.Codes() {
				assert.Contains(t, listed, code, "a declared code is documented")
			}
			assert.Contains(t, listed, "unauthorized", "the API authenticates")
			assert.Contains(t, listed, "rate_limited", "the API limits rates")
			assert.NotNil(t, o.Responses.Status(op.Status), "the success")

			var confirm, idem bool
			require.NoError(t, json.Unmarshal(extension(t, o.Extensions, "x-confirmation-required"), &confirm))
			require.NoError(t, json.Unmarshal(extension(t, o.Extensions, "x-ax-idempotent"), &idem))
			assert.Equal(t, op.Confirm, confirm)
			assert.Equal(t, op.Idempotency != server.IdempotencyOff || op.Method != "POST", idem)
			var retryable bool
			require.NoError(t, json.Unmarshal(extension(t, o.Extensions, "x-ax-retryable"), &retryable))
			assert.Equal(t, op.Idempotency == server.IdempotencyRequired || op.Method != "POST", retryable, op.ID)

			headers := map[string]bool{}
			for _, p := range o.Parameters {
				if p.Value.In == "header" {
					headers[p.Value.Name] = p.Value.Required
				}
			}
			if op.Confirm {
				assert.Contains(t, headers, "X-Confirmation-Token")
				assert.Contains(t, o.Description, "409 confirmation_required", "the handshake in words")
				assert.Contains(t, o.Description, "X-Confirmation-Token")
			} else {
				assert.NotContains(t, headers, "X-Confirmation-Token")
			}
			switch op.Idempotency {
			case server.IdempotencyOff:
				assert.NotContains(t, headers, "Idempotency-Key")
			case server.IdempotencyOptional:
				assert.Equal(t, false, headers["Idempotency-Key"])
				assert.Contains(t, headers, "Idempotency-Key")
			case server.IdempotencyRequired:
				assert.Equal(t, true, headers["Idempotency-Key"])
			}
		})
	}
	for _, c := range []string{"not_found", "method_not_allowed", "confirmation_required", "idempotency_key_required"} {
		assert.Contains(t, all, c)
	}
	assert.True(t, json.Valid(raw))
}

// extension returns an extension's raw JSON, failing the test when it is missing.
func extension(t *testing.T, ext map[string]any, name string) json.RawMessage {
	t.Helper()
	v, ok := ext[name]
	require.True(t, ok, "extension %s missing", name)
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestOpenAPISchemasAreTheValidatingOnes checks requests against the document with kin-openapi's
// own request validator and against the server: both accept the same good requests, and both
// refuse the same bad ones, so the schemas published are the schemas enforced.
func TestOpenAPISchemasAreTheValidatingOnes(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t)
	doc, _ := loadOpenAPI(t, srv.URL)
	doc.Servers = openapi3.Servers{{URL: srv.URL}}
	router, err := gorillamux.NewRouter(doc)
	require.NoError(t, err)

	cases := []struct {
		method, path, body string
		ok                 bool
	}{
		{"POST", "/v1/invoices", `{"customer_id":"cus_ada","currency":"eur","amount":1200}`, true},
		{"POST", "/v1/invoices", `{"customer_id":"cus_ada","currency":"EUR","amount":1200}`, false},
		{"POST", "/v1/invoices", `{"customer_id":"ada","currency":"eur","amount":1200}`, false},
		{"POST", "/v1/invoices", `{"customer_id":"cus_ada","currency":"eur","amount":0}`, false},
		{"POST", "/v1/invoices", `{"customer_id":"cus_ada","currency":"eur"}`, false},
		{"POST", "/v1/invoices", `{"customer_id":"cus_ada","currency":"eur","amount":5,"tip":1}`, false},
		{"GET", "/v1/reports/revenue?currency=usd", ``, true},
		{"GET", "/v1/reports/revenue?currency=yen", ``, false},
		{"GET", "/v1/reports/revenue", ``, false},
		{"POST", "/v1/invoices/in_999/finalize", ``, false}, // unknown invoice, but a valid request
		{"POST", "/v1/invoices/inv-1/finalize", ``, false},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path+" "+c.body, func(t *testing.T) {
			req := httptest.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			route, params, err := router.FindRoute(req)
			require.NoError(t, err)
			kinErr := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
				Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
			})
			status, _, body := do(t, c.method, srv.URL+c.path, contentType(c.body), c.body)
			serverValid := status < 400 || !slices.Contains([]int{400, 422}, status)
			if c.path == "/v1/invoices/in_999/finalize" {
				assert.NoError(t, kinErr)
				assert.Equal(t, 404, status, "%s", body)
				return
			}
			assert.Equal(t, c.ok, kinErr == nil, "kin-openapi: %v", kinErr)
			assert.Equal(t, c.ok, serverValid, "server: %d %s", status, body)
		})
	}
}

func contentType(body string) string {
	if body == "" {
		return ""
	}
	return "application/json"
}

func TestOpenAPIServing(t *testing.T) {
	t.Parallel()
	api, _, srv := billingServer(t)

	status, h, body := do(t, "POST", srv.URL+"/openapi.json", "", "")
	env := envelope(t, status, h, body)
	assert.Equal(t, 405, status)
	assert.Equal(t, "method_not_allowed", env.Code)
	assert.Equal(t, "GET, HEAD", h.Get("Allow"))

	status, h, body = do(t, "HEAD", srv.URL+"/openapi.json", "", "")
	assert.Equal(t, 200, status)
	assert.Empty(t, body)
	doc, err := api.OpenAPI()
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(len(doc)), h.Get("Content-Length"))

	again, err := api.OpenAPI()
	require.NoError(t, err)
	assert.Equal(t, doc, again, "the document is stable")
}

func TestOpenAPIPathOptions(t *testing.T) {
	t.Parallel()
	api, err := server.New(server.WithOpenAPIPath("/v1/spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := func(ctx context.Context, in struct{}) (struct{}, error) { return struct{}{}, nil }
	err = server.Get(api, "/v1/spec.json", h)
	require.Error(t, err, "an operation cannot take the document's path")
	assert.Contains(t, err.Error(), "/v1/spec.json")
	err = server.Post(api, "/mcp", h)
	require.Error(t, err, "nor the MCP endpoint's")
	require.NoError(t, server.Get(api, "/openapi.json", h), "the default path is free once moved")
	srv := httptest.NewServer(api)
	defer srv.Close()
	status, _, body := do(t, "GET", srv.URL+"/v1/spec.json", "", "")
	require.Equal(t, 200, status)
	assert.Contains(t, string(body), `"openapi":"3.1.0"`)
	status, _, body = do(t, "GET", srv.URL+"/openapi.json", "", "")
	require.Equal(t, 200, status)
	assert.Equal(t, "{}", string(body), "the operation, not the document")

	off, err := server.New(server.WithOpenAPIPath(""), server.WithMCP(server.MCPOptions{Disabled: true}))
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(off)
	defer srv2.Close()
	for _, p := range []string{"/openapi.json", "/mcp"} {
		status, h, body := do(t, "GET", srv2.URL+p, "", "")
		assert.Equal(t, http.StatusNotFound, status)
		assert.Equal(t, "not_found", envelope(t, status, h, body).Code)
	}
}
