package conformance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/remedy-go/remedy/conformance"
)

// lintOutcomes is each rule's outcome and detail: what must not depend on the notation.
func lintOutcomes(r *conformance.Report) map[string]string {
	out := map[string]string{}
	for _, res := range r.Results {
		out[res.Rule.ID] = string(res.Outcome) + ": " + res.Detail
	}
	return out
}

// The billing document written as YAML lints as its JSON does, rule by rule.
func TestLintYAML(t *testing.T) {
	t.Parallel()
	doc := lintBilling(t)
	var v any
	require.NoError(t, json.Unmarshal(doc, &v))
	y, err := yaml.Marshal(v)
	require.NoError(t, err)
	require.NotEqual(t, byte('{'), y[0])
	fromJSON, fromYAML := conformance.Lint(doc), conformance.Lint(y)
	require.True(t, fromJSON.OK(), "%+v", fromJSON.Results)
	assert.Equal(t, lintOutcomes(fromJSON), lintOutcomes(fromYAML))
}

// Published documents, in YAML and in JSON, get the same verdicts.
func TestLintPublishedYAML(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"petstore-3.0", "petstore-3.1", "uspto"} {
		read := func(ext string) *conformance.Report {
			b, err := os.ReadFile(filepath.Join("..", "testdata", "openapi", name+ext))
			require.NoError(t, err)
			return conformance.Lint(b)
		}
		fromYAML, fromJSON := read(".yaml"), read(".json")
		res, _ := fromYAML.Result("lint-openapi")
		assert.Equal(t, conformance.Pass, res.Outcome, "%s: %s", name, res.Detail)
		assert.Equal(t, lintOutcomes(fromJSON), lintOutcomes(fromYAML), name)
	}
}

// An Idempotency-Key header parameter says that an operation takes a key as well as
// x-idempotency-key does: the rule reads both, as the client and the probe do.
func TestLintIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		doc     string
		outcome conformance.Outcome
		detail  string
	}{
		{"a required header, no extension", `openapi: 3.1.0
paths:
  /orders:
    post:
      operationId: create_order
      parameters:
        - {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
`, conformance.Pass, "1 operation accepting a key (1 requiring it)"},
		{"an optional header on an idempotent POST", `openapi: 3.1.0
paths:
  /orders:
    parameters: [{$ref: '#/components/parameters/Key'}]
    post: {operationId: create_order, x-ax-idempotent: true}
components:
  parameters:
    Key: {name: idempotency-key, in: header}
`, conformance.Pass, "1 operation accepting a key (0 requiring it)"},
		{"a required header beside an optional extension", `openapi: 3.1.0
paths:
  /orders:
    post:
      operationId: create_order
      x-idempotency-key: optional
      parameters: [{name: Idempotency-Key, in: header, required: true}]
`, conformance.Pass, "1 operation accepting a key (1 requiring it)"},
		{"x-idempotency-key: true", `openapi: 3.1.0
paths:
  /orders: {post: {operationId: create_order, x-ax-idempotent: true, x-idempotency-key: true}}
`, conformance.Pass, "1 operation accepting a key (0 requiring it)"},
		{"another header on an idempotent POST", `openapi: 3.1.0
paths:
  /orders:
    post:
      operationId: create_order
      x-ax-idempotent: true
      parameters: [{name: X-Idempotency-Key, in: header}]
`, conformance.Fail, "x-ax-idempotent is true but neither an Idempotency-Key header parameter nor x-idempotency-key is declared"},
		{"no key anywhere", `openapi: 3.1.0
paths:
  /orders: {post: {operationId: create_order}}
`, conformance.Skip, "no operation accepts an Idempotency-Key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := conformance.Lint([]byte(c.doc))
			lintShape(t, r)
			res, _ := r.Result("lint-idempotency-key")
			assert.Equal(t, c.outcome, res.Outcome, res.Detail)
			assert.Contains(t, res.Detail, c.detail)
		})
	}
}
