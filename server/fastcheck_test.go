package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
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
			assert.Equal(t, c.accept, v.fast.acceptsText(js, 0, false), "the text check: %s", js)
			if c.accept {
				assert.NoError(t, v.root.Validate(inst))
			}
		})
	}
}

// The text check reads the body as written: it accepts only exactly one JSON value that
// encoding/json and the validator read alike, and leaves the rest to the full path.
func TestFastCheckText(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	valid := vtOrderJSON(t, nil)
	require.True(t, v.fast.acceptsText(valid, 0, false), valid)
	for _, c := range []struct {
		name, js string
		accept   bool
	}{
		{"whitespace around and inside", " \n\t" + strings.ReplaceAll(valid, ",", " ,\r\n ") + "  ", true},
		{"an escape in a value, unescaped before the pattern", strings.Replace(valid, `"cus_1"`, `"cus\u005f1"`, 1), true},
		{"an escape in a value that breaks the pattern", strings.Replace(valid, `"cus_1"`, `"cus\u002d1"`, 1), false},
		{"trailing data", valid + " {}", false},
		{"two values", valid + valid, false},
		{"truncated", valid[:len(valid)-1], false},
		{"a member named twice", strings.Replace(valid, `"currency":"usd"`, `"currency":"usd","currency":"eur"`, 1), false},
		{"an escaped member name", strings.Replace(valid, `"currency"`, `"\u0063urrency"`, 1), false},
		{"invalid UTF-8 in a string", strings.Replace(valid, `"ord_1"`, "\"ord\xff\"", 1), false},
		{"a control character in a string", strings.Replace(valid, `"ord_1"`, "\"ord\x01\"", 1), false},
		{"a valid number beyond 15 significant digits: left to the validator", strings.Replace(valid, `{`, `{"a/b~c":-1000000000000000001,`, 1), false},
		{"a number not in JSON's grammar", strings.Replace(valid, `"quantity":1`, `"quantity":01`, 1), false},
		{"a literal misspelled", strings.Replace(valid, `"quantity":1`, `"quantity":tru`, 1), false},
		{"empty", "", false},
		{"only whitespace", "  ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.accept, v.fast.acceptsText(c.js, 0, false), "%q", c.js)
			if c.accept {
				inst, err := decodeBody([]byte(c.js))
				require.NoError(t, err)
				assert.NoError(t, v.root.Validate(inst))
			}
		})
	}
}

// Nesting past maxFastDepth is left to the full path.
func TestFastCheckTextDepth(t *testing.T) {
	t.Parallel()
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	_, ok := anything.text(nested(maxFastDepth), 0, 0)
	assert.True(t, ok)
	_, ok = anything.text(nested(maxFastDepth+1), 0, 0)
	assert.False(t, ok)
}

// With parameters, the body must be an object naming none of them, and the required ones
// missing from it must be among those the request carries.
func TestFastCheckTextWithParameters(t *testing.T) {
	t.Parallel()
	type note struct {
		ID      string `path:"id" schema:"pattern=^n_"`
		Version int    `query:"version" schema:"minimum=1"`
		Text    string `json:"text" schema:"maxLength=10"`
	}
	s, params, err := inputSchema(reflect.TypeFor[note]())
	require.NoError(t, err)
	v, err := newValidator(s)
	require.NoError(t, err)
	require.NotNil(t, v.fast)
	v.fast.markParams(params)
	both := v.fast.props["id"].bit | v.fast.props["version"].bit
	assert.True(t, v.fast.acceptsText(`{"text":"hi"}`, both, true))
	assert.False(t, v.fast.acceptsText(`{"text":"hi"}`, v.fast.props["id"].bit, true), "a required parameter missing")
	assert.False(t, v.fast.acceptsText(`{"text":"hi","id":"n_1"}`, both, true), "a parameter in the body")
	assert.False(t, v.fast.acceptsText(`["text"]`, both, true), "a body that is not an object")
	assert.False(t, v.fast.acceptsText(`{"text":"far too long"}`, both, true))
}

func TestSigDigits(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"0": 0, "100": 3, "-0.00120": 3, "1.5e300": 2, "123456789012345678": 18, "9.5": 2} {
		assert.Equal(t, want, sigDigits(s), s)
	}
}

// A cycle of references at one value is left to the validator, which reports it: the fast
// check would follow it forever.
func TestFastCheckRefCycle(t *testing.T) {
	t.Parallel()
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal([]byte(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},`+
		`"type":"object","properties":{"x":{"$ref":"#/$defs/a"}}}`), &s))
	v, err := newValidator(&s)
	require.NoError(t, err)
	assert.False(t, v.fast.accepts(vtDecode(t, `{"x":1}`)))
	assert.False(t, v.fast.acceptsText(`{"x":1}`, 0, false))
	issues, _ := v.validate(vtDecode(t, `{"x":1}`))
	require.NotEmpty(t, issues)
	assert.Equal(t, "ref_cycle", issues[0].Code)
}
