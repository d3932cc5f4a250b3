package conformance_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/conformance"
	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
)

// lintBilling is the billing API's OpenAPI document, on a server configured by opts.
func lintBilling(t testing.TB, opts ...server.Option) []byte {
	t.Helper()
	api, _, err := billing.New(opts...)
	require.NoError(t, err)
	doc, err := api.OpenAPI()
	require.NoError(t, err)
	return doc
}

// lintEdit decodes doc, lets edit change it, and encodes it again.
func lintEdit(t testing.TB, doc []byte, edit func(d map[string]any)) []byte {
	t.Helper()
	var d map[string]any
	require.NoError(t, json.Unmarshal(doc, &d))
	edit(d)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	return b
}

// lintAt walks d by keys: lintAt(d, "paths", "/v1/charges", "post").
func lintAt(d map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		d = d[k].(map[string]any)
	}
	return d
}

// Billing's operations, by operationId.
func lintOp(d map[string]any, id string) map[string]any {
	where := map[string][2]string{
		"create_invoice":   {"/v1/invoices", "post"},
		"get_invoice":      {"/v1/invoices/{id}", "get"},
		"finalize_invoice": {"/v1/invoices/{id}/finalize", "post"},
		"send_invoice":     {"/v1/invoices/{id}/send", "post"},
		"charge":           {"/v1/charges", "post"},
		"delete_customer":  {"/v1/customers/{id}", "delete"},
		"revenue_report":   {"/v1/reports/revenue", "get"},
	}[id]
	return lintAt(d, "paths", where[0], where[1])
}

// lintShape checks what every report of Lint has: one result per rule, in order, each with
// a known outcome, a failure with its detail and at most five pieces of evidence.
func lintShape(t testing.TB, r *conformance.Report) {
	t.Helper()
	rules := conformance.LintRules()
	if len(r.Results) != len(rules) {
		t.Fatalf("%d results, want %d", len(r.Results), len(rules))
	}
	for i, res := range r.Results {
		if res.Rule != rules[i] {
			t.Fatalf("result %d is %s, want %s", i, res.ID, rules[i].ID)
		}
		switch res.Outcome {
		case conformance.Pass, conformance.Skip:
		case conformance.Fail:
			if res.Detail == "" {
				t.Fatalf("%s failed without a detail", res.ID)
			}
			// lint-openapi's detail says all there is: the document is its only evidence.
			if (len(res.Evidence) == 0 && res.ID != "lint-openapi") || len(res.Evidence) > 5 {
				t.Fatalf("%s failed with %d pieces of evidence", res.ID, len(res.Evidence))
			}
		default:
			t.Fatalf("%s: outcome %q", res.ID, res.Outcome)
		}
	}
	if r.Started.IsZero() || r.Duration < 0 {
		t.Fatalf("started %v, duration %v", r.Started, r.Duration)
	}
}

func TestLintRules(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, r := range conformance.LintRules() {
		assert.True(t, strings.HasPrefix(r.ID, "lint-"), r.ID)
		assert.False(t, seen[r.ID], "duplicate %s", r.ID)
		seen[r.ID] = true
		assert.NotEmpty(t, r.Statement)
		assert.NotContains(t, r.Statement, "\n")
	}
	assert.Equal(t, "lint-openapi", conformance.LintRules()[0].ID)
}

// The reference server's documents meet every rule, whatever options shape them.
func TestLintReferenceServer(t *testing.T) {
	t.Parallel()
	auth := server.AuthenticatorFunc(func(*http.Request, *server.Operation) (server.Principal, error) {
		return "someone", nil
	})
	for name, opts := range map[string][]server.Option{
		"default":       nil,
		"rate limit":    {server.WithRateLimit(server.RateLimitOptions{PerSecond: 10, Burst: 5})},
		"authenticated": {server.WithAuthenticator(auth), server.WithRateLimit(server.RateLimitOptions{PerSecond: 1, Burst: 1})},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := conformance.Lint(lintBilling(t, opts...))
			lintShape(t, r)
			for _, res := range r.Results {
				assert.Equal(t, conformance.Pass, res.Outcome, "%s: %s", res.ID, res.Detail)
			}
		})
	}
	r := conformance.Lint(lintBilling(t))
	res, _ := r.Result("lint-openapi")
	assert.Equal(t, "OpenAPI 3.1.0, 7 operations in 7 paths", res.Detail)
	res, _ = r.Result("lint-operation-ids")
	assert.Equal(t, "7 operations, each with its own operationId", res.Detail)
}

// Variations the contract allows: each document passes every rule.
func TestLintAccepts(t *testing.T) {
	t.Parallel()
	base := lintBilling(t, server.WithRateLimit(server.RateLimitOptions{PerSecond: 10, Burst: 5}))
	for _, c := range []struct {
		name string
		edit func(d map[string]any)
	}{
		{"default instead of 500", func(d map[string]any) {
			rs := lintAt(lintOp(d, "get_invoice"), "responses")
			rs["default"] = rs["500"]
			delete(rs, "500")
		}},
		{"a 4XX range", func(d map[string]any) {
			rs := lintAt(lintOp(d, "get_invoice"), "responses")
			rs["4XX"] = rs["404"]
			delete(rs, "404")
		}},
		{"problem+json only, with a charset", func(d map[string]any) {
			r := lintAt(lintOp(d, "get_invoice"), "responses", "404")
			r["content"] = map[string]any{"application/problem+json; charset=utf-8": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}}
		}},
		{"a response by reference", func(d map[string]any) {
			rs := lintAt(lintOp(d, "charge"), "responses")
			d["components"].(map[string]any)["responses"] = map[string]any{"RateLimited": rs["429"]}
			rs["429"] = map[string]any{"$ref": "#/components/responses/RateLimited"}
		}},
		{"a lower-case retry-after, inline", func(d map[string]any) {
			lintAt(lintOp(d, "charge"), "responses", "503")["headers"] = map[string]any{
				"retry-after": map[string]any{"schema": map[string]any{"type": "integer"}}}
		}},
		{"header parameters inline, on the path item", func(d map[string]any) {
			op := lintOp(d, "delete_customer")
			op["parameters"] = op["parameters"].([]any)[1:]
			lintAt(d, "paths", "/v1/customers/{id}")["parameters"] = []any{
				map[string]any{"name": "x-confirmation-token", "in": "header", "schema": map[string]any{"type": "string"}}}
		}},
		{"x-idempotency-key without a parameter", func(d map[string]any) {
			delete(lintOp(d, "create_invoice"), "parameters")
		}},
		{"no catalog", func(d map[string]any) { delete(d, "x-agent-errors") }},
		{"no response-level codes", func(d map[string]any) {
			for _, r := range lintAt(lintOp(d, "charge"), "responses") {
				delete(r.(map[string]any), "x-agent-error-codes")
			}
		}},
		{"a schema nested deeper than Lint looks", func(d map[string]any) {
			s := map[string]any{"$ref": "#/components/schemas/Nowhere"}
			for range 2000 {
				s = map[string]any{"items": s}
			}
			r := lintAt(lintOp(d, "get_invoice"), "responses", "404")
			r["content"] = map[string]any{"application/json": map[string]any{"schema": s}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := conformance.Lint(lintEdit(t, base, c.edit))
			lintShape(t, r)
			assert.Empty(t, r.Failed(), "%+v", r.Results)
		})
	}
}

// Each break of the billing document fails its rule and no other.
func TestLintBreaks(t *testing.T) {
	t.Parallel()
	base := lintBilling(t, server.WithRateLimit(server.RateLimitOptions{PerSecond: 10, Burst: 5}))
	for _, c := range []struct {
		rule, name string
		edit       func(d map[string]any)
		detail     string // a part of the failure's detail
	}{
		{"lint-openapi", "Swagger version", func(d map[string]any) { d["openapi"] = "2.0" },
			`openapi is "2.0"`},
		{"lint-openapi", "no paths", func(d map[string]any) { delete(d, "paths") },
			"no paths"},
		{"lint-openapi", "an operation that is not an object", func(d map[string]any) {
			lintAt(d, "paths", "/v1/charges")["post"] = "charge"
		}, "POST /v1/charges is a string, not an operation object"},

		{"lint-operation-ids", "duplicate", func(d map[string]any) { lintOp(d, "finalize_invoice")["operationId"] = "get_invoice" },
			`POST /v1/invoices/{id}/finalize (get_invoice): operationId "get_invoice" is also GET /v1/invoices/{id}'s`},
		{"lint-operation-ids", "missing", func(d map[string]any) { delete(lintOp(d, "charge"), "operationId") },
			"POST /v1/charges: no operationId"},
		{"lint-operation-ids", "not a string", func(d map[string]any) { lintOp(d, "charge")["operationId"] = 7 },
			"operationId is a number"},

		{"lint-error-responses", "an HTML error", func(d map[string]any) {
			lintAt(lintOp(d, "get_invoice"), "responses", "404")["content"] = map[string]any{"text/html": map[string]any{}}
		}, "GET /v1/invoices/{id} (get_invoice): response 404: no JSON content, only text/html"},
		{"lint-error-responses", "no body", func(d map[string]any) {
			delete(lintAt(lintOp(d, "charge"), "responses", "422"), "content")
		}, "response 422: no content"},
		{"lint-error-responses", "no schema", func(d map[string]any) {
			lintAt(lintOp(d, "charge"), "responses", "422")["content"] = map[string]any{"application/json": map[string]any{}}
		}, "response 422: application/json has no schema"},
		{"lint-error-responses", "a dangling schema reference", func(d map[string]any) {
			delete(lintAt(d, "components", "schemas"), "Envelope")
		}, `$ref "#/components/schemas/Envelope" does not resolve`},
		{"lint-error-responses", "a dangling reference inside the schema", func(d map[string]any) {
			delete(lintAt(d, "components", "schemas"), "Issue")
		}, `$ref "#/components/schemas/Issue" does not resolve`},
		{"lint-error-responses", "no 5xx", func(d map[string]any) {
			op := lintOp(d, "get_invoice")
			delete(lintAt(op, "responses"), "500")
			var codes []any
			for _, c := range op["x-agent-error-codes"].([]any) {
				if c != "internal_error" {
					codes = append(codes, c)
				}
			}
			op["x-agent-error-codes"] = codes
		}, "GET /v1/invoices/{id} (get_invoice): no 5xx or default response"},

		{"lint-error-codes", "missing", func(d map[string]any) { delete(lintOp(d, "get_invoice"), "x-agent-error-codes") },
			"GET /v1/invoices/{id} (get_invoice): no x-agent-error-codes"},
		{"lint-error-codes", "empty", func(d map[string]any) { lintOp(d, "revenue_report")["x-agent-error-codes"] = []any{} },
			"x-agent-error-codes is empty"},
		{"lint-error-codes", "not in the catalog", func(d map[string]any) { delete(lintAt(d, "x-agent-errors"), "not_found") },
			"x-agent-error-codes lists not_found, not in x-agent-errors"},
		{"lint-error-codes", "a response lists another code", func(d map[string]any) {
			r := lintAt(lintOp(d, "charge"), "responses", "409")
			r["x-agent-error-codes"] = append(r["x-agent-error-codes"].([]any), "precondition_failed")
		}, "(charge): response 409 lists precondition_failed, which the operation's x-agent-error-codes does not"},
		{"lint-error-codes", "a response lists a code under another status", func(d map[string]any) {
			r := lintAt(lintOp(d, "charge"), "responses", "404")
			r["x-agent-error-codes"] = append(r["x-agent-error-codes"].([]any), "invalid_body")
		}, "(charge): response 404 lists invalid_body (catalog status 422)"},
		{"lint-error-codes", "a code under another status", func(d map[string]any) {
			lintAt(d, "x-agent-errors", "not_found")["status"] = 410
		}, "response 404 lists not_found (catalog status 410)"},
		{"lint-error-codes", "a code no response lists", func(d map[string]any) {
			op := lintOp(d, "get_invoice")
			op["x-agent-error-codes"] = append(op["x-agent-error-codes"].([]any), "precondition_failed")
		}, "x-agent-error-codes lists precondition_failed, which no response lists"},
		{"lint-error-codes", "a catalog that is not an object", func(d map[string]any) { d["x-agent-errors"] = []any{"not_found"} },
			"x-agent-errors: is an array"},

		{"lint-retry-markers", "missing", func(d map[string]any) { delete(lintOp(d, "finalize_invoice"), "x-ax-retryable") },
			"POST /v1/invoices/{id}/finalize (finalize_invoice): no x-ax-retryable"},
		{"lint-retry-markers", "both missing", func(d map[string]any) {
			delete(lintOp(d, "delete_customer"), "x-ax-retryable")
			delete(lintOp(d, "delete_customer"), "x-ax-idempotent")
		}, "(delete_customer): no x-ax-retryable; no x-ax-idempotent"},
		{"lint-retry-markers", "not a boolean", func(d map[string]any) { lintOp(d, "send_invoice")["x-ax-idempotent"] = "no" },
			"x-ax-idempotent is a string, not a boolean"},

		{"lint-idempotency-key", "no key", func(d map[string]any) {
			delete(lintOp(d, "create_invoice"), "parameters")
			delete(lintOp(d, "create_invoice"), "x-idempotency-key")
		}, "POST /v1/invoices (create_invoice): x-ax-idempotent is true but neither an Idempotency-Key header parameter nor x-idempotency-key is declared"},
		{"lint-idempotency-key", "a required key not marked required", func(d map[string]any) {
			lintOp(d, "charge")["parameters"] = []any{map[string]any{"$ref": "#/components/parameters/IdempotencyKey"}}
		}, "(charge): x-idempotency-key is required but the Idempotency-Key header parameter is not marked required"},
		{"lint-idempotency-key", "a required key not declared", func(d map[string]any) { delete(lintOp(d, "charge"), "parameters") },
			"(charge): x-idempotency-key is required but no Idempotency-Key header parameter is declared"},
		{"lint-idempotency-key", "an unknown mode", func(d map[string]any) { lintOp(d, "create_invoice")["x-idempotency-key"] = "sometimes" },
			`x-idempotency-key is "sometimes", not "optional", "required" or a boolean`},

		{"lint-confirmation", "no token parameter", func(d map[string]any) { lintOp(d, "delete_customer")["parameters"] = []any{} },
			"DELETE /v1/customers/{id} (delete_customer): no X-Confirmation-Token header parameter"},
		{"lint-confirmation", "a DELETE that does not say", func(d map[string]any) { delete(lintOp(d, "delete_customer"), "x-confirmation-required") },
			"(delete_customer): a DELETE that does not state x-confirmation-required"},
		{"lint-confirmation", "confirmation without the flow", func(d map[string]any) { lintOp(d, "send_invoice")["x-confirmation-required"] = true },
			"(send_invoice): the 409 response does not list confirmation_required; no X-Confirmation-Token header parameter"},
		{"lint-confirmation", "not a boolean", func(d map[string]any) { lintOp(d, "get_invoice")["x-confirmation-required"] = "no" },
			"x-confirmation-required is a string, not a boolean"},

		{"lint-retry-after", "a 503 without it", func(d map[string]any) {
			delete(lintAt(lintOp(d, "charge"), "responses", "503"), "headers")
		}, "POST /v1/charges (charge): response 503 does not document the Retry-After header"},
		{"lint-retry-after", "a 429 with a dangling reference", func(d map[string]any) {
			delete(lintAt(d, "components", "headers"), "RetryAfter")
		}, `response 429 Retry-After: $ref "#/components/headers/RetryAfter" does not resolve`},
	} {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			t.Parallel()
			r := conformance.Lint(lintEdit(t, base, c.edit))
			lintShape(t, r)
			require.Equal(t, []string{c.rule}, r.Failed(), "%+v", r.Results)
			res, _ := r.Result(c.rule)
			assert.Contains(t, res.Detail, c.detail)
			for _, ex := range res.Evidence {
				assert.Zero(t, ex.Status)
				assert.Contains(t, res.Detail, ex.Request+": "+ex.Response)
			}
			if c.rule == "lint-openapi" {
				assert.Equal(t, len(conformance.LintRules())-1, r.Count(conformance.Skip))
			}
		})
	}
}

// A failure shows five findings and counts the rest.
func TestLintEvidenceBounded(t *testing.T) {
	t.Parallel()
	doc := lintEdit(t, lintBilling(t), func(d map[string]any) {
		for _, item := range lintAt(d, "paths") {
			for _, op := range item.(map[string]any) {
				delete(op.(map[string]any), "operationId")
			}
		}
	})
	r := conformance.Lint(doc)
	require.Equal(t, []string{"lint-operation-ids"}, r.Failed())
	res, _ := r.Result("lint-operation-ids")
	assert.Len(t, res.Evidence, 5)
	assert.Equal(t, conformance.Exchange{Request: "POST /v1/charges", Response: "no operationId"}, res.Evidence[0])
	assert.True(t, strings.HasSuffix(res.Detail, "; and 2 more"), res.Detail)
}

// Whatever the input, Lint answers with a report that says what is wrong.
func TestLintGarbage(t *testing.T) {
	t.Parallel()
	billingDoc := lintBilling(t)
	edit := func(f func(d map[string]any)) string { return string(lintEdit(t, billingDoc, f)) }
	minimal := func(paths string) string {
		return `{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":` + paths + `}`
	}
	chain := func(d map[string]any) {
		schemas := lintAt(d, "components", "schemas")
		for i := range 40 {
			schemas[fmt.Sprint("S", i)] = map[string]any{"$ref": fmt.Sprint("#/components/schemas/S", i+1)}
		}
		schemas["S40"] = map[string]any{}
		lintAt(lintOp(d, "get_invoice"), "responses", "404")["content"] = map[string]any{
			"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/S0"}}}
	}
	for _, c := range []struct {
		name, doc string
		failed    []string
		detail    string
	}{
		{"empty", "", nil, "the document is empty"},
		{"blank", " \n\t", nil, "the document is empty"},
		{"null", "null", nil, "the document is null, not a JSON object"},
		{"array", "[]", nil, "the document is an array, not a JSON object"},
		{"string", `"openapi"`, nil, "the document is a string"},
		{"number", "1e999999", nil, "the document is a number"},
		{"truncated", `{"openapi":`, nil, "the document is not JSON"},
		{"invalid JSON", `{"openapi": "3.1.0" "paths": {}}`, nil, "the document is not JSON: invalid character '\"' after object key:value pair at line 1, column 21"},
		{"a YAML flow mapping", `{"openapi": 3.1.0}`, nil, "the document has no paths"},
		{"two values", "{}\n{}", nil, "more follows the first"},
		{"invalid UTF-8", "{\"openapi\":\"3.1.0\xff\"}", nil, "not UTF-8 text (invalid byte at line 1, column 18)"},
		{"deep arrays", strings.Repeat("[", 100000), nil, "exceeded max depth"},
		{"deep objects", strings.Repeat(`{"a":`, 100000), nil, "exceeded max depth"},
		{"Swagger 2.0", `{"swagger":"2.0","info":{"title":"x","version":"1"},"paths":{"/x":{"get":{"responses":{}}}}}`, nil,
			`Swagger (swagger: "2.0"), not OpenAPI 3.x`},
		{"YAML", "openapi: 3.1.0\ninfo:\n  title: x\n", nil, "the document has no paths"},
		{"YAML with a marker", "---\nopenapi: 3.1.0\n", nil, "the document has no paths"},
		{"invalid YAML", "openapi: 3.1.0\npaths:\n  /a:\n    get: {responses: [}\n", nil, "the document is not valid YAML: line 4: did not find expected node content"},
		{"YAML without a JSON equivalent", "openapi: 3.1.0\npaths:\n  ? [a]\n  : {}\n", nil, "not valid YAML: line 3, column 5: a mapping key that is not a scalar"},
		{"YAML whose anchors explode", "openapi: 3.1.0\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
			"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n" +
			"f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n", nil, "expand to more than"},
		{"no version", `{"paths":{}}`, nil, "no openapi member"},
		{"a number for a version", `{"openapi":3.1,"paths":{}}`, nil, "openapi is a number"},
		{"OpenAPI 4", `{"openapi":"4.0.0","paths":{}}`, nil, `openapi is "4.0.0"`},
		{"no operations", minimal(`{}`), nil, "describes no operation"},
		{"only extensions", minimal(`{"x-a":{"get":{}},"/a":{"summary":"x"}}`), nil, "describes no operation"},
		{"paths an array", minimal(`[]`), nil, "paths is an array"},
		{"a path item that is not an object", minimal(`{"/a":1}`), nil, "path /a is a number"},
		{"a path item $ref cycle", minimal(`{"/a":{"$ref":"#/paths/~1b"},"/b":{"$ref":"#/paths/~1a"}}`), nil,
			"path /a: $ref cycle: #/paths/~1b → #/paths/~1a → #/paths/~1b"},
		{"an external path item", minimal(`{"/a":{"$ref":"common.json#/a"}}`), nil, "points outside the document"},
		{"a $ref that is not a string", minimal(`{"/a":{"$ref":{}}}`), nil, "$ref is an object"},
		{"a schema $ref cycle", edit(func(d map[string]any) {
			s := lintAt(d, "components", "schemas")
			s["Envelope"] = map[string]any{"$ref": "#/components/schemas/Problem"}
			s["Problem"] = map[string]any{"$ref": "#/components/schemas/Envelope"}
		}), []string{"lint-error-responses"}, "$ref cycle"},
		{"a self-referring schema", edit(func(d map[string]any) {
			lintAt(d, "components", "schemas")["Envelope"] = map[string]any{"$ref": "#/components/schemas/Envelope"}
		}), []string{"lint-error-responses"}, "$ref cycle: #/components/schemas/Envelope → #/components/schemas/Envelope"},
		{"a long $ref chain", edit(chain), []string{"lint-error-responses"}, "starts a chain of more than 32 references"},
		{"a parameter $ref cycle", edit(func(d map[string]any) {
			lintAt(d, "components", "parameters")["ConfirmationToken"] = map[string]any{"$ref": "#/components/parameters/ConfirmationToken"}
		}), []string{"lint-confirmation"}, "no X-Confirmation-Token header parameter (unresolved: $ref cycle"},
		{"a response $ref cycle", edit(func(d map[string]any) {
			lintAt(d, "components")["responses"] = map[string]any{"A": map[string]any{"$ref": "#/components/responses/A"}}
			lintAt(lintOp(d, "get_invoice"), "responses")["404"] = map[string]any{"$ref": "#/components/responses/A"}
		}), []string{"lint-error-responses"}, "response 404: $ref cycle"},
		{"an external schema", edit(func(d map[string]any) {
			lintAt(d, "components", "schemas")["Envelope"] = map[string]any{"$ref": "https://example.com/envelope.json"}
		}), []string{"lint-error-responses"}, "points outside the document"},
		{"a reference to the root", edit(func(d map[string]any) {
			lintAt(d, "components", "schemas")["Envelope"] = map[string]any{"$ref": "#"}
		}), nil, ""},
		{"an operation without responses", minimal(`{"/a":{"post":{"operationId":"a"}}}`),
			[]string{"lint-error-responses", "lint-error-codes", "lint-retry-markers"}, ""},
		{"wrong types everywhere", minimal(`{"/a":{"parameters":7,"delete":{"operationId":"a","parameters":{"a":1},` +
			`"responses":{"400":[],"503":"x","default":{"content":{"application/json":[]}}},"x-agent-error-codes":[1],` +
			`"x-confirmation-required":true,"x-ax-idempotent":1,"x-ax-retryable":null,"x-idempotency-key":true}}}`),
			[]string{"lint-error-responses", "lint-error-codes", "lint-retry-markers", "lint-confirmation"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := conformance.Lint([]byte(c.doc))
			lintShape(t, r)
			want := c.failed
			if want == nil && c.detail != "" {
				want = []string{"lint-openapi"}
			}
			require.Equal(t, want, r.Failed(), "%+v", r.Results)
			if c.detail != "" {
				res, _ := r.Result(want[0])
				assert.Contains(t, res.Detail, c.detail)
			}
		})
	}
}

// lintCompact is the rate-limited billing document cut to three operations that meet the
// rules, without prose or input schemas: a seed small enough for the fuzzer to minimize what
// it finds.
func lintCompact(t testing.TB) []byte {
	return lintEdit(t, lintBilling(t, server.WithRateLimit(server.RateLimitOptions{PerSecond: 1, Burst: 1})), func(d map[string]any) {
		paths := lintAt(d, "paths")
		for p := range paths {
			if p != "/v1/charges" && p != "/v1/customers/{id}" && p != "/v1/reports/revenue" {
				delete(paths, p)
			}
		}
		for _, item := range paths {
			for _, op := range item.(map[string]any) {
				op := op.(map[string]any)
				delete(op, "description")
				delete(op, "summary")
				delete(op, "requestBody")
				for k, r := range lintAt(op, "responses") {
					r := r.(map[string]any)
					delete(r, "description")
					delete(r, "content")
					if k >= "4" {
						r["content"] = map[string]any{"application/json": map[string]any{
							"schema": map[string]any{"$ref": "#/components/schemas/Envelope"}}}
					}
				}
			}
		}
		for _, c := range lintAt(d, "x-agent-errors") {
			delete(c.(map[string]any), "hint")
		}
		d["components"] = map[string]any{
			"schemas": map[string]any{
				"Envelope": map[string]any{"properties": map[string]any{"error": map[string]any{"$ref": "#/components/schemas/Failure"}}},
				"Failure": map[string]any{"properties": map[string]any{"errors": map[string]any{
					"items": map[string]any{"$ref": "#/components/schemas/Failure"}}}},
			},
			"parameters": lintAt(d, "components", "parameters"),
			"headers":    lintAt(d, "components", "headers"),
		}
	})
}

func FuzzLint(f *testing.F) {
	seed := lintCompact(f)
	if r := conformance.Lint(seed); !r.OK() {
		f.Fatalf("the compact seed fails %v", r.Failed())
	}
	f.Add(seed)
	for _, s := range []string{
		"", "null", "[]", "{", `{"swagger":"2.0"}`, "openapi: 3.1.0\n",
		"openapi: 3.1.0\npaths:\n  /a: &a\n    post: {operationId: a, x-idempotency-key: true, parameters: [{name: Idempotency-Key, in: header}]}\n  /b: {<<: *a, get: {}}\n",
		"openapi: 3.1.0\npaths:\n  /a: {$ref: '#/paths/~1b'}\n  /b: &b [*b]\n",
		`{"openapi":"3.1.0","paths":{"/a":{"$ref":"#/paths/~1a"}}}`,
		`{"openapi":"3.0.3","paths":{"/a":{"delete":{"responses":{"409":{"$ref":"#/components/responses/X"},"429":{"headers":{"Retry-After":{"$ref":"#"}}}}}}},` +
			`"components":{"responses":{"X":{"$ref":"#/components/responses/X"}}}}`,
		`{"openapi":"3.1.0","paths":{"/a":{"post":{"operationId":"a","x-ax-idempotent":true,"x-idempotency-key":"required",` +
			`"parameters":[{"$ref":"#/components/parameters/K"}],"responses":{"4XX":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/E"}}}}}}}},` +
			`"components":{"parameters":{"K":{"name":"idempotency-key","in":"header"}},"schemas":{"E":{"properties":{"e":{"$ref":"#/components/schemas/E"}}}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		lintShape(t, conformance.Lint(doc))
	})
}
