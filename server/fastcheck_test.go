package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fast check accepts what is surely valid, and leaves everything else — the invalid, and
// what it does not decide exactly — to the full validator, which must agree on every accept.
func TestFastCheck(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	require.NotNil(t, v.fast)
	for _, c := range []struct {
		name   string
		edits  map[string]any
		accept bool
	}{
		{"the minimal order", nil, true},
		{"every decided keyword in range", map[string]any{"limit": 50, "email": "ann@example.com", "note": "short",
			"tags": []any{"gift", "rush"}, "weight": 9, "channel": "api", "a/b~c": 1, "currency": "gbp"}, true},
		{"null where a pointer allows it", map[string]any{"note": json.RawMessage("null")}, true},
		{"enum", map[string]any{"currency": "USD"}, false},
		{"const", map[string]any{"channel": "web"}, false},
		{"pattern", map[string]any{"customer_id": "c_1"}, false},
		{"format", map[string]any{"email": "not an email"}, false},
		{"maxLength in characters", map[string]any{"note": "ééééééééééé"}, false},
		{"a bound", map[string]any{"limit": 51}, false},
		{"an exclusive bound", map[string]any{"weight": 10}, false},
		{"integer written with a fraction: left to the validator", map[string]any{"limit": 2.5}, false},
		{"uniqueItems", map[string]any{"tags": []any{"gift", "gift"}}, false},
		{"maxItems", map[string]any{"tags": []any{"gift", "rush", "gift", "rush"}}, false},
		{"an unknown member", map[string]any{"colour": "red"}, false},
		{"a missing required member", map[string]any{"currency": nil}, false},
		{"type", map[string]any{"items": "many"}, false},
		{"multipleOf is not decided here", map[string]any{"discount": 0.1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			js := vtOrderJSON(t, c.edits)
			inst := vtDecode(t, js)
			assert.Equal(t, c.accept, v.fast.accepts(inst), "%s", js)
			if c.accept {
				assert.NoError(t, v.root.Validate(inst))
			}
		})
	}
}

func TestSigDigits(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"0": 0, "100": 3, "-0.00120": 3, "1.5e300": 2, "123456789012345678": 18, "9.5": 2} {
		assert.Equal(t, want, sigDigits(s), s)
	}
}
