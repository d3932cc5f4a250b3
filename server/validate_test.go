package server

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
)

// vtOrderValidator is vtOrder's validator, compiled once for all tests.
var vtOrderValidator = sync.OnceValues(func() (*validator, error) {
	s, _, err := inputSchema(reflect.TypeFor[vtOrder]())
	if err != nil {
		return nil, err
	}
	return newValidator(s)
})

// vtValidator returns vtOrder's validator.
func vtValidator(tb testing.TB) *validator {
	tb.Helper()
	v, err := vtOrderValidator()
	require.NoError(tb, err)
	return v
}

// vtDecode decodes an instance as the pipeline does.
func vtDecode(tb testing.TB, s string) any {
	tb.Helper()
	v, err := decodeInstance([]byte(s))
	require.NoError(tb, err)
	return v
}

// vtRaw is s as raw JSON.
func vtRaw(s string) json.RawMessage { return json.RawMessage(s) }

// vtRaws is each of s as raw JSON.
func vtRaws(s ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(s))
	for i, x := range s {
		out[i] = vtRaw(x)
	}
	return out
}

// vtOrderJSON is a valid order with the given members replaced (or removed, for a nil value),
// so that each case states only what it breaks.
func vtOrderJSON(tb testing.TB, edits map[string]any) string {
	tb.Helper()
	o := map[string]any{
		"id":          "ord_1",
		"customer_id": "cus_1",
		"currency":    "usd",
		"items":       []any{map[string]any{"sku": "sku_a", "quantity": 1}},
	}
	for k, v := range edits {
		if v == nil {
			delete(o, k)
			continue
		}
		if r, ok := v.(json.RawMessage); ok && string(r) == "null" {
			o[k] = nil
			continue
		}
		o[k] = v
	}
	b, err := json.Marshal(o)
	require.NoError(tb, err)
	return string(b)
}

// The leaf subschemas of vtOrder the cases expect inline.
const (
	vtCustomerSchema = `{"type":"string","description":"The customer who pays.","pattern":"^cus_"}`
	vtCurrencySchema = `{"type":"string","default":"usd","enum":["usd","eur","gbp"]}`
	vtItemSchema     = `{"type":"object","properties":{"sku":{"type":"string","pattern":"^sku_[a-z0-9]+$"},"quantity":{"type":"integer","minimum":1,"maximum":100}},"required":["sku","quantity"],"additionalProperties":false}`
	vtQuantitySchema = `{"type":"integer","minimum":1,"maximum":100}`
	vtItemsSchema    = `{"type":"array","items":` + vtItemSchema + `,"minItems":1,"maxItems":20}`
	vtTagsSchema     = `{"type":["null","array"],"items":{"type":"string","enum":["gift","rush"]},"maxItems":3,"uniqueItems":true}`
	vtWeightSchema   = `{"type":"integer","exclusiveMinimum":0.5,"exclusiveMaximum":9.5}`
	vtDiscountSchema = `{"type":"number","multipleOf":0.05,"maximum":0.5,"exclusiveMinimum":0}`
)

// TestValidateOrder checks the exact issue and inlined schema for each keyword, one violation
// at a time.
func TestValidateOrder(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	items := func(qs ...any) []any {
		var out []any
		for i, q := range qs {
			out = append(out, map[string]any{"sku": "sku_" + string(rune('a'+i)), "quantity": q})
		}
		return out
	}
	tests := []struct {
		name     string
		instance string
		want     []remedy.Issue
		violated string
	}{
		{
			name:     "required",
			instance: vtOrderJSON(t, map[string]any{"customer_id": nil}),
			want: []remedy.Issue{{
				Path: "/customer_id", Code: "required", Message: "customer_id is required",
				Expected: vtRaw(vtCustomerSchema),
			}},
			violated: vtCustomerSchema,
		},
		{
			name:     "required with a default suggests it",
			instance: vtOrderJSON(t, map[string]any{"currency": nil}),
			want: []remedy.Issue{{
				Path: "/currency", Code: "required", Message: "currency is required",
				Expected: vtRaw(vtCurrencySchema), SuggestedValue: vtRaw(`"usd"`),
			}},
			violated: vtCurrencySchema,
		},
		{
			name:     "required path parameter",
			instance: vtOrderJSON(t, map[string]any{"id": nil}),
			want: []remedy.Issue{{
				Path: "/id", Code: "required", Message: "id is required",
				Expected: vtRaw(`{"type":"string","pattern":"^ord_"}`),
			}},
			violated: `{"type":"string","pattern":"^ord_"}`,
		},
		{
			name:     "required in an array item",
			instance: vtOrderJSON(t, map[string]any{"items": []any{map[string]any{"quantity": 1}}}),
			want: []remedy.Issue{{
				Path: "/items/0/sku", Code: "required", Message: "items[0].sku is required",
				Expected: vtRaw(`{"type":"string","pattern":"^sku_[a-z0-9]+$"}`),
			}},
			violated: `{"type":"string","pattern":"^sku_[a-z0-9]+$"}`,
		},
		{
			name:     "type with an obvious conversion",
			instance: vtOrderJSON(t, map[string]any{"items": items(1, 1, "5")}),
			want: []remedy.Issue{{
				Path: "/items/2/quantity", Code: "type", Message: "items[2].quantity must be an integer, not a string",
				Expected: vtRaw(`"integer"`), Received: vtRaw(`"5"`), SuggestedValue: vtRaw(`5`),
			}},
			violated: vtQuantitySchema,
		},
		{
			name:     "type conversion out of range is not suggested",
			instance: vtOrderJSON(t, map[string]any{"items": items("500")}),
			want: []remedy.Issue{{
				Path: "/items/0/quantity", Code: "type", Message: "items[0].quantity must be an integer, not a string",
				Expected: vtRaw(`"integer"`), Received: vtRaw(`"500"`),
			}},
			violated: vtQuantitySchema,
		},
		{
			name:     "type: a fraction for an integer",
			instance: vtOrderJSON(t, map[string]any{"items": items(2.5)}),
			want: []remedy.Issue{{
				Path: "/items/0/quantity", Code: "type", Message: "items[0].quantity must be an integer, not 2.5",
				Expected: vtRaw(`"integer"`), Received: vtRaw(`2.5`),
			}},
			violated: vtQuantitySchema,
		},
		{
			name:     "type of a nullable field",
			instance: vtOrderJSON(t, map[string]any{"note": 42}),
			want: []remedy.Issue{{
				Path: "/note", Code: "type", Message: "note must be a string or null, not a number",
				Expected: vtRaw(`"string"`), Received: vtRaw(`42`), SuggestedValue: vtRaw(`"42"`),
			}},
			violated: `{"type":["null","string"],"maxLength":10}`,
		},
		{
			name:     "type: null for a required array",
			instance: vtOrderJSON(t, map[string]any{"items": vtRaw("null")}),
			want: []remedy.Issue{{
				Path: "/items", Code: "type", Message: "items must be an array, not null",
				Expected: vtRaw(`"array"`), Received: vtRaw(`null`),
			}},
			violated: vtItemsSchema,
		},
		{
			name:     "enum",
			instance: vtOrderJSON(t, map[string]any{"currency": "yen"}),
			want: []remedy.Issue{{
				Path: "/currency", Code: "enum", Message: "currency must be one of usd, eur, gbp",
				Received: vtRaw(`"yen"`), AllowedValues: vtRaws(`"usd"`, `"eur"`, `"gbp"`),
			}},
			violated: vtCurrencySchema,
		},
		{
			name:     "enum: a case variant",
			instance: vtOrderJSON(t, map[string]any{"currency": "USD"}),
			want: []remedy.Issue{{
				Path: "/currency", Code: "enum", Message: "currency must be one of usd, eur, gbp",
				Received: vtRaw(`"USD"`), AllowedValues: vtRaws(`"usd"`, `"eur"`, `"gbp"`), SuggestedValue: vtRaw(`"usd"`),
			}},
			violated: vtCurrencySchema,
		},
		{
			name:     "enum: surrounding space",
			instance: vtOrderJSON(t, map[string]any{"currency": " Eur "}),
			want: []remedy.Issue{{
				Path: "/currency", Code: "enum", Message: "currency must be one of usd, eur, gbp",
				Received: vtRaw(`" Eur "`), AllowedValues: vtRaws(`"usd"`, `"eur"`, `"gbp"`), SuggestedValue: vtRaw(`"eur"`),
			}},
			violated: vtCurrencySchema,
		},
		{
			name:     "enum on slice items",
			instance: vtOrderJSON(t, map[string]any{"tags": []any{"rush", "GIFT"}}),
			want: []remedy.Issue{{
				Path: "/tags/1", Code: "enum", Message: "tags[1] must be one of gift, rush",
				Received: vtRaw(`"GIFT"`), AllowedValues: vtRaws(`"gift"`, `"rush"`), SuggestedValue: vtRaw(`"gift"`),
			}},
			violated: `{"type":"string","enum":["gift","rush"]}`,
		},
		{
			name:     "const",
			instance: vtOrderJSON(t, map[string]any{"channel": "web"}),
			want: []remedy.Issue{{
				Path: "/channel", Code: "const", Message: "channel must be api",
				Received: vtRaw(`"web"`), AllowedValues: vtRaws(`"api"`), SuggestedValue: vtRaw(`"api"`),
			}},
			violated: `{"type":"string","const":"api"}`,
		},
		{
			name:     "minimum: the bound is expected, not suggested",
			instance: vtOrderJSON(t, map[string]any{"items": items(0)}),
			want: []remedy.Issue{{
				Path: "/items/0/quantity", Code: "minimum", Message: "items[0].quantity must be at least 1",
				Expected: vtRaw(`{"minimum":1}`), Received: vtRaw(`0`),
			}},
			violated: vtQuantitySchema,
		},
		{
			name:     "maximum in the third item",
			instance: vtOrderJSON(t, map[string]any{"items": items(1, 100, 101)}),
			want: []remedy.Issue{{
				Path: "/items/2/quantity", Code: "maximum", Message: "items[2].quantity must be at most 100",
				Expected: vtRaw(`{"maximum":100}`), Received: vtRaw(`101`),
			}},
			violated: vtQuantitySchema,
		},
		{
			name:     "maximum of a query parameter",
			instance: vtOrderJSON(t, map[string]any{"limit": 51}),
			want: []remedy.Issue{{
				Path: "/limit", Code: "maximum", Message: "limit must be at most 50",
				Expected: vtRaw(`{"maximum":50}`), Received: vtRaw(`51`),
			}},
			violated: `{"type":"integer","minimum":1,"maximum":50}`,
		},
		{
			name:     "exclusive minimum of an integer",
			instance: vtOrderJSON(t, map[string]any{"weight": 0}),
			want: []remedy.Issue{{
				Path: "/weight", Code: "exclusive_minimum", Message: "weight must be greater than 0.5",
				Expected: vtRaw(`{"exclusiveMinimum":0.5}`), Received: vtRaw(`0`),
			}},
			violated: vtWeightSchema,
		},
		{
			name:     "exclusive maximum of an integer",
			instance: vtOrderJSON(t, map[string]any{"weight": 12}),
			want: []remedy.Issue{{
				Path: "/weight", Code: "exclusive_maximum", Message: "weight must be less than 9.5",
				Expected: vtRaw(`{"exclusiveMaximum":9.5}`), Received: vtRaw(`12`),
			}},
			violated: vtWeightSchema,
		},
		{
			name:     "exclusive minimum of a number",
			instance: vtOrderJSON(t, map[string]any{"discount": 0}),
			want: []remedy.Issue{{
				Path: "/discount", Code: "exclusive_minimum", Message: "discount must be greater than 0",
				Expected: vtRaw(`{"exclusiveMinimum":0}`), Received: vtRaw(`0`),
			}},
			violated: vtDiscountSchema,
		},
		{
			name:     "maximum of a number",
			instance: vtOrderJSON(t, map[string]any{"discount": 0.75}),
			want: []remedy.Issue{{
				Path: "/discount", Code: "maximum", Message: "discount must be at most 0.5",
				Expected: vtRaw(`{"maximum":0.5}`), Received: vtRaw(`0.75`),
			}},
			violated: vtDiscountSchema,
		},
		{
			name:     "multiple of",
			instance: vtOrderJSON(t, map[string]any{"discount": 0.33}),
			want: []remedy.Issue{{
				Path: "/discount", Code: "multiple_of", Message: "discount must be a multiple of 0.05",
				Expected: vtRaw(`{"multipleOf":0.05}`), Received: vtRaw(`0.33`),
			}},
			violated: vtDiscountSchema,
		},
		{
			name:     "max length",
			instance: vtOrderJSON(t, map[string]any{"note": "leave at the door"}),
			want: []remedy.Issue{{
				Path: "/note", Code: "max_length", Message: "note must be at most 10 characters long",
				Expected: vtRaw(`{"maxLength":10}`), Received: vtRaw(`"leave at the door"`),
			}},
			violated: `{"type":["null","string"],"maxLength":10}`,
		},
		{
			name:     "pattern",
			instance: vtOrderJSON(t, map[string]any{"customer_id": "acme"}),
			want: []remedy.Issue{{
				Path: "/customer_id", Code: "pattern", Message: "customer_id must match the pattern ^cus_",
				Expected: vtRaw(`{"pattern":"^cus_"}`), Received: vtRaw(`"acme"`),
			}},
			violated: vtCustomerSchema,
		},
		{
			name:     "format",
			instance: vtOrderJSON(t, map[string]any{"email": "ann at example.com"}),
			want: []remedy.Issue{{
				Path: "/email", Code: "format", Message: "email must be a valid email address",
				Expected: vtRaw(`{"format":"email"}`), Received: vtRaw(`"ann at example.com"`),
			}},
			violated: `{"type":"string","format":"email"}`,
		},
		{
			name:     "min items",
			instance: vtOrderJSON(t, map[string]any{"items": []any{}}),
			want: []remedy.Issue{{
				Path: "/items", Code: "min_items", Message: "items must contain at least 1 item",
				Expected: vtRaw(`{"minItems":1}`), Received: vtRaw(`[]`),
			}},
			violated: vtItemsSchema,
		},
		{
			name:     "max items",
			instance: vtOrderJSON(t, map[string]any{"tags": []any{"gift", "rush", "gift", "rush"}}),
			want: []remedy.Issue{
				{
					Path: "/tags", Code: "max_items", Message: "tags must contain at most 3 items",
					Expected: vtRaw(`{"maxItems":3}`), Received: vtRaw(`["gift","rush","gift","rush"]`),
				},
				{
					Path: "/tags", Code: "unique_items", Message: "tags must not contain duplicates (items 0 and 2 are equal)",
					Expected: vtRaw(`{"uniqueItems":true}`), Received: vtRaw(`["gift","rush","gift","rush"]`),
				},
			},
			violated: vtTagsSchema,
		},
		{
			name:     "additional properties at the root: the object is the violated schema",
			instance: vtOrderJSON(t, map[string]any{"zip": "x", "coupon": 5}),
			want: []remedy.Issue{
				{
					Path: "/coupon", Code: "additional_properties",
					Message:  "coupon is not an allowed property (allowed: id, limit, customer_id, currency, items, email, note, tags, weight, discount and 2 more)",
					Expected: vtRaw(`{"additionalProperties":false}`), Received: vtRaw(`5`),
				},
				{
					Path: "/zip", Code: "additional_properties",
					Message:  "zip is not an allowed property (allowed: id, limit, customer_id, currency, items, email, note, tags, weight, discount and 2 more)",
					Expected: vtRaw(`{"additionalProperties":false}`), Received: vtRaw(`"x"`),
				},
			},
			violated: vtOrderSchema,
		},
		{
			name:     "additional property in an item",
			instance: vtOrderJSON(t, map[string]any{"items": []any{map[string]any{"sku": "sku_a", "quantity": 1, "price": 9}}}),
			want: []remedy.Issue{{
				Path: "/items/0/price", Code: "additional_properties",
				Message:  "items[0].price is not an allowed property (allowed: sku, quantity)",
				Expected: vtRaw(`{"additionalProperties":false}`), Received: vtRaw(`9`),
			}},
			violated: vtItemSchema,
		},
		{
			name:     "RFC 6901 escaping of ~ and /",
			instance: vtOrderJSON(t, map[string]any{"a/b~c": 2}),
			want: []remedy.Issue{{
				Path: "/a~1b~0c", Code: "maximum", Message: "a/b~c must be at most 1",
				Expected: vtRaw(`{"maximum":1}`), Received: vtRaw(`2`),
			}},
			violated: `{"type":"integer","maximum":1}`,
		},
		{
			name:     "escaping in an additional property",
			instance: vtOrderJSON(t, map[string]any{"x/~y": true}),
			want: []remedy.Issue{{
				Path: "/x~1~0y", Code: "additional_properties",
				Message:  "x/~y is not an allowed property (allowed: id, limit, customer_id, currency, items, email, note, tags, weight, discount and 2 more)",
				Expected: vtRaw(`{"additionalProperties":false}`), Received: vtRaw(`true`),
			}},
			violated: vtOrderSchema,
		},
		{
			name:     "not an object",
			instance: `["ord_1"]`,
			want: []remedy.Issue{{
				Path: "", Code: "type", Message: "the input must be an object, not an array",
				Expected: vtRaw(`"object"`), Received: vtRaw(`["ord_1"]`),
			}},
			violated: vtOrderSchema,
		},
		{
			name:     "a number too large to validate, beside another issue",
			instance: strings.Replace(vtOrderJSON(t, map[string]any{"customer_id": "x"}), `"quantity":1`, `"quantity":1e999999`, 1),
			want: []remedy.Issue{
				{
					Path: "/customer_id", Code: "pattern", Message: "customer_id must match the pattern ^cus_",
					Expected: vtRaw(`{"pattern":"^cus_"}`), Received: vtRaw(`"x"`),
				},
				{
					Path: "/items/0/quantity", Code: "invalid_number",
					Message: "items[0].quantity must be a number of at most 128 characters, with an exponent of at most 1000",
					// Not echoed: no double holds it, and a client decoding the envelope
					// into float64 would lose the whole envelope for it.
				},
			},
			violated: `{"type":"object","properties":{"customer_id":` + vtCustomerSchema +
				`,"items":{"type":"array","items":{"type":"object","properties":{"quantity":` + vtQuantitySchema +
				`},"required":["quantity"]}}},"required":["customer_id","items"]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			issues, violated := v.validate(vtDecode(t, tt.instance))
			assert.Equal(t, tt.want, issues)
			assert.Equal(t, tt.violated, string(violated))
		})
	}
}

// TestValidateValid checks that valid orders give no issue and no schema.
func TestValidateValid(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	for _, in := range []string{
		vtOrderJSON(t, nil),
		vtOrderJSON(t, map[string]any{
			"limit": 50, "email": "ann@example.com", "note": vtRaw("null"), "tags": []any{"gift", "rush"},
			"weight": 9, "discount": 0.45, "channel": "api", "a/b~c": -7,
		}),
		vtOrderJSON(t, map[string]any{"tags": vtRaw("null"), "items": []any{map[string]any{"sku": "sku_z9", "quantity": 1e2}}}),
	} {
		issues, violated := v.validate(vtDecode(t, in))
		assert.Nil(t, issues, in)
		assert.Nil(t, violated, in)
	}
}

// vtMany breaks an order in many places at once.
const vtMany = `{"id":"ord_1","customer_id":"acme","currency":"USD","limit":0,"extra":{"a":1},` +
	`"items":[{"sku":"sku_a","quantity":1},{"sku":"sku_b"},{"sku":"SKU-C","quantity":101},` +
	`{"sku":"sku_d","quantity":1},{"sku":"sku_e","quantity":1},{"sku":"sku_f","quantity":1},` +
	`{"sku":"sku_g","quantity":1},{"sku":"sku_h","quantity":1},{"sku":"sku_i","quantity":1},` +
	`{"sku":"sku_j","quantity":1},{"sku":"sku_k","quantity":"0"}],` +
	`"email":"nope","tags":["gift","gift"]}`

// TestValidateManyAtOnce checks that every violation is reported, in pointer order.
func TestValidateManyAtOnce(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	issues, violated := v.validate(vtDecode(t, vtMany))
	var got []string
	for _, is := range issues {
		got = append(got, is.Path+" "+is.Code)
	}
	// Sorted by pointer segment by segment: items/10 after items/2.
	assert.Equal(t, []string{
		"/currency enum",
		"/customer_id pattern",
		"/email format",
		"/extra additional_properties",
		"/items/1/quantity required",
		"/items/2/quantity maximum",
		"/items/2/sku pattern",
		"/items/10/quantity type",
		"/limit minimum",
		"/tags unique_items",
	}, got)
	// The extra property's object is the root: the whole schema stands for every leaf.
	assert.Equal(t, vtOrderSchema, string(violated))
	// A type error whose obvious conversion still breaks the bound suggests nothing.
	assert.Nil(t, issues[7].SuggestedValue)
	assert.Equal(t, vtRaw(`"0"`), issues[7].Received)
}

// TestValidatePrunedExcerpt checks the schema inlined for issues about several subschemas.
func TestValidatePrunedExcerpt(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	in := strings.NewReplacer(`"customer_id":"cus_1"`, `"customer_id":"acme"`).Replace(
		vtOrderJSON(t, map[string]any{"items": []any{
			map[string]any{"sku": "sku_a", "quantity": 1},
			map[string]any{"sku": "sku_b", "quantity": 1},
			map[string]any{"sku": "sku_c", "quantity": 101},
		}}))
	issues, violated := v.validate(vtDecode(t, in))
	require.Len(t, issues, 2)
	assert.Equal(t, "/customer_id", issues[0].Path)
	assert.Equal(t, "/items/2/quantity", issues[1].Path)
	// Only the paths to the two leaves, each leaf whole, required cut to what is kept.
	assert.Equal(t, `{"type":"object","properties":{`+
		`"customer_id":{"type":"string","description":"The customer who pays.","pattern":"^cus_"},`+
		`"items":{"type":"array","items":{"type":"object","properties":{`+
		`"quantity":{"type":"integer","minimum":1,"maximum":100}},"required":["quantity"]}}},`+
		`"required":["customer_id","items"]}`, string(violated))

	// Two issues of one leaf inline that leaf alone.
	issues, violated = v.validate(vtDecode(t, vtOrderJSON(t, map[string]any{"tags": []any{"a", "a", "a", "a"}})))
	require.Len(t, issues, 6) // maxItems, uniqueItems, and each item's enum
	assert.Equal(t, vtTagsSchema, string(violated))

	// A leaf and one inside it: the outer stands for both.
	issues, violated = v.validate(vtDecode(t, vtOrderJSON(t, map[string]any{"items": []any{
		map[string]any{"sku": "sku_a", "quantity": 0}, map[string]any{"sku": "sku_b", "quantity": 1, "x": 1},
	}})))
	require.Len(t, issues, 2)
	assert.Equal(t, vtItemSchema, string(violated))
}

// TestValidateDeterministic checks that the envelope is byte-identical between runs.
func TestValidateDeterministic(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	var first []byte
	for i := range 30 {
		issues, violated := v.validate(vtDecode(t, vtMany)) // a fresh decode: fresh map order
		env := remedy.Envelope{Status: 422, Code: "invalid_body", Issues: issues, Schema: violated}
		b, err := env.MarshalJSON()
		require.NoError(t, err)
		if i == 0 {
			first = b
			continue
		}
		require.Equal(t, string(first), string(b), "run %d", i)
	}
}

// TestValidateRoundTrip checks that the issues survive the canonical encoding and remedy.Parse.
func TestValidateRoundTrip(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	for _, in := range []string{
		vtMany,
		vtOrderJSON(t, map[string]any{"currency": nil, "a/b~c": 3, "channel": "web"}),
	} {
		issues, violated := v.validate(vtDecode(t, in))
		require.NotEmpty(t, issues)
		env := remedy.Envelope{Status: 422, Code: "invalid_body", Issues: issues, Schema: violated}
		body, err := env.MarshalJSON()
		require.NoError(t, err)
		got, ok := remedy.Parse(422, nil, body)
		require.True(t, ok)
		assert.Equal(t, "invalid_body", got.Code)
		assert.JSONEq(t, string(violated), string(got.Schema))
		require.Len(t, got.Issues, len(issues))
		for i, want := range issues {
			g := got.Issues[i]
			assert.Equal(t, want.Path, g.Path, "issue %d", i)
			assert.Equal(t, want.Code, g.Code, "issue %d", i)
			assert.Equal(t, want.Message, g.Message, "issue %d", i)
			vtJSONEq(t, want.Expected, g.Expected, "expected of %s", want.Path)
			vtJSONEq(t, want.Received, g.Received, "received of %s", want.Path)
			vtJSONEq(t, want.SuggestedValue, g.SuggestedValue, "suggested value of %s", want.Path)
			require.Len(t, g.AllowedValues, len(want.AllowedValues), "allowed values of %s", want.Path)
			for j := range want.AllowedValues {
				vtJSONEq(t, want.AllowedValues[j], g.AllowedValues[j], "allowed value of %s", want.Path)
			}
		}
	}
}

// vtJSONEq asserts that two raw values are the same JSON, or both absent.
func vtJSONEq(t *testing.T, want, got json.RawMessage, msg string, args ...any) {
	t.Helper()
	if len(want) == 0 {
		assert.Empty(t, got, append([]any{msg}, args...)...)
		return
	}
	assert.JSONEq(t, string(want), string(got), append([]any{msg}, args...)...)
}

// TestValidateOtherKeywords covers a hand-built schema with what Go types do not produce.
func TestValidateOtherKeywords(t *testing.T) {
	t.Parallel()
	one := 1.0
	s := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"any":   {AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}},
			"one":   {OneOf: []*jsonschema.Schema{{Minimum: jsonschema.Ptr(0.0)}, {Maximum: jsonschema.Ptr(10.0)}}},
			"not":   {Not: &jsonschema.Schema{Type: "string"}},
			"never": {Not: &jsonschema.Schema{}},
			"obj":   {Type: "object", MinProperties: jsonschema.Ptr(2), DependentRequired: map[string][]string{"a": {"b"}}},
			"ref":   {Ref: "#/$defs/pos"},
			"b64":   {Type: "string", ContentEncoding: "base64"},
		},
		Defs: map[string]*jsonschema.Schema{"pos": {Type: "integer", Minimum: &one}},
	}
	v, err := newValidator(s)
	require.NoError(t, err)
	issues, violated := v.validate(vtDecode(t, `{"any":true,"one":5,"not":"s","never":1,"obj":{"a":1},"ref":0,"b64":"!!"}`))
	var got []string
	for _, is := range issues {
		got = append(got, is.Path+" "+is.Code+": "+is.Message)
	}
	assert.Equal(t, []string{
		"/any any_of: any must match at least one of the schemas under anyOf",
		"/b64 content_encoding: b64 must be base64-encoded",
		"/never not_allowed: never is not allowed",
		"/not not: not must not match the schema under not",
		"/obj min_properties: obj must have at least 2 properties",
		"/obj/b dependent_required: obj.b is required when obj.a is present",
		"/one one_of: one must match exactly one of the schemas under oneOf, not 0 and 1",
		"/ref minimum: ref must be at least 1",
	}, got)
	assert.Equal(t, vtRaw(`{"minimum":1}`), issues[7].Expected, "the bound of the referenced schema")
	assert.Nil(t, issues[7].SuggestedValue, "a bound is expected, not suggested")
	assert.Equal(t, `{"type":"object","properties":{`+
		`"any":{"anyOf":[{"type":"string"},{"type":"integer"}]},`+
		`"b64":{"type":"string","contentEncoding":"base64"},`+
		`"never":false,`+
		`"not":{"not":{"type":"string"}},`+
		`"obj":{"type":"object","minProperties":2,"dependentRequired":{"a":["b"]}},`+
		`"one":{"oneOf":[{"minimum":0},{"maximum":10}]}},`+
		`"$defs":{"pos":{"type":"integer","minimum":1}}}`, string(violated))
}

// TestValidateNotJSON: values a careless caller might pass are issues, not panics.
func TestValidateNotJSON(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	for _, in := range []any{
		nil, math.NaN(), math.Inf(1), json.Number("abc"), json.Number(""), struct{}{}, []int{1},
		map[string]any{"customer_id": make(chan int), "items": []any{json.Number("1e1000001")}},
		map[string]any{"items": []any{map[string]any{"quantity": json.Number("9" + strings.Repeat("9", 200))}}},
	} {
		assert.NotPanics(t, func() {
			issues, violated := v.validate(in)
			assert.NotEmpty(t, issues, "%#v", in)
			assert.True(t, json.Valid(violated), "%#v", in)
		})
	}
	issues, _ := v.validate(math.NaN())
	assert.Equal(t, "invalid_value", issues[0].Code)
}

// TestNewValidatorErrors checks schemas that do not compile.
func TestNewValidatorErrors(t *testing.T) {
	t.Parallel()
	_, err := newValidator(nil)
	assert.Error(t, err)
	_, err = newValidator(&jsonschema.Schema{Ref: "https://example.com/elsewhere.json"})
	assert.Error(t, err, "no fetching")
	_, err = newValidator(&jsonschema.Schema{Pattern: "("})
	assert.Error(t, err)
}

// TestComparePointers checks the order issues are sorted in.
func TestComparePointers(t *testing.T) {
	t.Parallel()
	ps := []string{"/b", "/a/10", "", "/a/2/x", "/a/2", "/a/x", "/a", "/a/2/x/0", "/a~1b"}
	slices.SortFunc(ps, comparePointers)
	assert.Equal(t, []string{"", "/a", "/a/2", "/a/2/x", "/a/2/x/0", "/a/10", "/a/x", "/a~1b", "/b"}, ps)
}

// vtValidPointer reports whether p is an RFC 6901 JSON Pointer.
func vtValidPointer(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 >= len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// FuzzValidate checks that any JSON instance gives sorted issues with valid pointers and JSON
// values, the same on a second run, and never a panic.
func FuzzValidate(f *testing.F) {
	v, err := vtOrderValidator()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(vtMany))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The text check is sound too: what it accepts is one JSON value, with no member
		// named twice, that the full validator accepts.
		if v.fast.acceptsText(string(data), 0, false) {
			inst, err := decodeBody(data)
			if err != nil {
				t.Fatalf("the text check accepted what the decoder refuses: %v", err)
			}
			if err := v.root.Validate(inst); err != nil {
				t.Fatalf("the text check accepted what the schema refuses: %v", err)
			}
		}
		inst, err := decodeInstance(data)
		if err != nil {
			return
		}
		// The fast check is sound: what it accepts, the full validator accepts.
		if v.fast.accepts(inst) {
			if err := v.root.Validate(inst); err != nil {
				t.Fatalf("the fast check accepted what the schema refuses: %v", err)
			}
		}
		issues, violated := v.validate(inst)
		if len(issues) == 0 {
			if violated != nil {
				t.Fatalf("violated schema without issues: %s", violated)
			}
			return
		}
		if !json.Valid(violated) {
			t.Fatalf("violated schema is not JSON: %q", violated)
		}
		for i, is := range issues {
			if !vtValidPointer(is.Path) {
				t.Fatalf("issue %d: path %q is no JSON Pointer", i, is.Path)
			}
			if is.Code == "" || is.Message == "" {
				t.Fatalf("issue %d: empty code or message: %+v", i, is)
			}
			for _, r := range append([]json.RawMessage{is.Expected, is.Received, is.SuggestedValue}, is.AllowedValues...) {
				if r != nil && !json.Valid(r) {
					t.Fatalf("issue %d: not JSON: %q", i, r)
				}
			}
			if is.Code == TooManyIssues {
				// The marker comes last, after MaxIssues issues.
				if i != MaxIssues || i != len(issues)-1 {
					t.Fatalf("issue %d of %d: %s", i, len(issues), is.Code)
				}
				continue
			}
			// Paths cut at issueMaxEcho are ordered by what was cut off.
			if i > 0 && !strings.HasSuffix(is.Path, "…") && !strings.HasSuffix(issues[i-1].Path, "…") {
				prev := issues[i-1]
				if d := comparePointers(prev.Path, is.Path); d > 0 || (d == 0 && prev.Code > is.Code) {
					t.Fatalf("issues out of order: %q %s before %q %s", prev.Path, prev.Code, is.Path, is.Code)
				}
			}
		}
		again, _ := v.validate(inst)
		if !reflect.DeepEqual(issues, again) {
			t.Fatalf("two runs differ:\n%+v\n%+v", issues, again)
		}
	})
}

// BenchmarkValidate measures validate on a valid order and on one with ten violations.
func BenchmarkValidate(b *testing.B) {
	v := vtValidator(b)
	for _, bc := range []struct{ name, in string }{
		{"valid", vtOrderJSON(b, map[string]any{
			"limit": 20, "email": "ann@example.com", "tags": []any{"gift"}, "items": []any{
				map[string]any{"sku": "sku_a", "quantity": 1}, map[string]any{"sku": "sku_b", "quantity": 20},
				map[string]any{"sku": "sku_c", "quantity": 3},
			},
		})},
		{"invalid", vtMany},
	} {
		inst := vtDecode(b, bc.in)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.validate(inst)
			}
		})
	}
}
