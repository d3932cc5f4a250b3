package conformance

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/remedy-go/remedy/examples/billing"
)

// The probe reads the billing document in YAML as it reads it in JSON, and refuses a path
// item it cannot reach rather than leave its operations out.
func TestReadDocumentYAML(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New()
	require.NoError(t, err)
	doc, err := api.OpenAPI()
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(doc, &v))
	y, err := yaml.Marshal(v)
	require.NoError(t, err)

	fromJSON, err := readDocument(doc, "application/json")
	require.NoError(t, err)
	fromYAML, err := readDocument(y, "application/yaml")
	require.NoError(t, err)
	assert.Equal(t, fromJSON.ops, fromYAML.ops)
	keyed := 0
	for _, op := range fromYAML.ops {
		if op.KeyMode != "" {
			keyed++
		}
	}
	assert.Positive(t, keyed, "operations that take an Idempotency-Key")

	_, err = readDocument([]byte("openapi: 3.1.0\npaths:\n  /a: {$ref: 'paths.yaml#/a'}\n"), "")
	assert.ErrorContains(t, err, "path /a: $ref \"paths.yaml#/a\" points outside the document")
	_, err = readDocument([]byte("openapi: 3.1.0\npaths:\n  /a: {get: [}\n"), "text/yaml")
	assert.ErrorContains(t, err, "not valid YAML: line 3")

	d, err := readDocument([]byte("openapi: 3.1.0\npaths:\n  /a: {$ref: '#/components/pathItems/A'}\ncomponents:\n  pathItems:\n    A:\n      post:\n        parameters: [{name: Idempotency-Key, in: header}]\n"), "")
	require.NoError(t, err)
	require.Len(t, d.ops, 1)
	assert.Equal(t, "optional", d.ops[0].KeyMode)
}
