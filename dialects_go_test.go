package remedy_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
)

// goIssue is what a test expects of one issue read from a Go validator's or decoder's text.
type goIssue struct {
	Path, Field, Code  string
	Expected, Received string
	Allowed            []string
}

func goIssues(e *remedy.Envelope) []goIssue {
	var out []goIssue
	for _, is := range e.Issues {
		g := goIssue{Path: is.Path, Field: is.Field, Code: is.Code, Expected: string(is.Expected), Received: string(is.Received)}
		for _, v := range is.AllowedValues {
			g.Allowed = append(g.Allowed, string(v))
		}
		out = append(out, g)
	}
	return out
}

// goBodies are the ways the Go frameworks carry a text: as text/plain (net/http, fiber,
// oapi-codegen's middleware), in gin's {"error"}, echo's {"message"} and ogen's
// {"error_message"}.
func goBodies(t *testing.T, text string) map[string]struct {
	header http.Header
	body   []byte
	d      remedy.Dialect
} {
	t.Helper()
	plain := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	js := http.Header{"Content-Type": {"application/json"}}
	out := map[string]struct {
		header http.Header
		body   []byte
		d      remedy.Dialect
	}{"text/plain": {plain, []byte(text + "\n"), remedy.DialectUnstructured}}
	for _, member := range []string{"error", "message", "error_message"} {
		b, err := json.Marshal(map[string]string{member: text})
		require.NoError(t, err)
		out[member] = struct {
			header http.Header
			body   []byte
			d      remedy.Dialect
		}{js, b, remedy.DialectGenericJSON}
	}
	return out
}

// TestParseGoTexts reads the templates of Go's validators and decoders, in every body the Go
// frameworks carry them in, at a client error's status and at fiber's 500. The recorded ones
// are in testdata/envelopes/{generic_json,unstructured}/{nethttp,gin,echo,fiber,kin-openapi,ogen}-*.
func TestParseGoTexts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		issues     []goIssue
	}{
		// go-playground/validator
		{"validator: Go names, no path", "Key: 'CreateItem.Lines[1].SKU' Error:Field validation for 'SKU' failed on the 'required' tag",
			[]goIssue{{Field: "Lines[1].SKU", Code: "required"}}},
		{"validator: names from a tag name function", "Key: 'CreateItem.lines[1].sku' Error:Field validation for 'sku' failed on the 'required' tag",
			[]goIssue{{Path: "/lines/1/sku", Code: "required"}}},
		{"validator: a map's key, escaped", "Key: 'Order.prices[a/b].amount' Error:Field validation for 'amount' failed on the 'gt' tag",
			[]goIssue{{Path: "/prices/a~1b/amount", Code: "gt"}}},
		{"validator: one Go name among JSON names", "Key: 'Order.items[0].Note' Error:Field validation for 'Note' failed on the 'max' tag",
			[]goIssue{{Field: "items[0].Note", Code: "max"}}},
		{"validator: labels for people, not members", "Key: 'Order.unit price' Error:Field validation for 'unit price' failed on the 'gt' tag",
			[]goIssue{{Field: "unit price", Code: "gt"}}},
		{"validator: a slice's item", "Key: 'Order.tags[2]' Error:Field validation for 'tags[2]' failed on the 'oneof' tag",
			[]goIssue{{Path: "/tags/2", Code: "oneof"}}},
		{"validator: several", "Key: 'CreateItem.SKU' Error:Field validation for 'SKU' failed on the 'required' tag\nKey: 'CreateItem.currency' Error:Field validation for 'currency' failed on the 'oneof' tag",
			[]goIssue{{Field: "SKU", Code: "required"}, {Path: "/currency", Code: "oneof"}}},
		{"fiber's documented example", "[SKU]: '' | Needs to implement 'required' and [Quantity]: '500' | Needs to implement 'max'",
			[]goIssue{{Code: "required"}, {Code: "max"}}},
		// encoding/json
		{"json: a member's type", "json: cannot unmarshal string into Go struct field CreateItem.quantity of type int",
			[]goIssue{{Path: "/quantity", Code: "type", Expected: `"integer"`}}},
		{"json: a number that is not an integer", "json: cannot unmarshal number 1.5 into Go struct field CreateItem.quantity of type int64",
			[]goIssue{{Path: "/quantity", Code: "type", Expected: `"integer"`, Received: "1.5"}}},
		{"json: through an array, the index dropped", "json: cannot unmarshal string into Go struct field Line.lines.quantity of type int",
			[]goIssue{{Field: "lines.quantity", Code: "type"}}},
		{"json: a named type may be anything", "json: cannot unmarshal number into Go struct field Order.currency of type main.Currency",
			[]goIssue{{Path: "/currency", Code: "type"}}},
		{"json: a list", "json: cannot unmarshal string into Go struct field Order.tags of type []string",
			[]goIssue{{Path: "/tags", Code: "type", Expected: `"array"`}}},
		{"json: the whole value", "json: cannot unmarshal array into Go value of type main.CreateItem",
			[]goIssue{{Code: "type"}}},
		{"json: syntax", "invalid character '}' looking for beginning of object key string", []goIssue{{Code: "invalid_json"}}},
		{"json: syntax, a quote", `invalid character '"' after object key:value pair`, []goIssue{{Code: "invalid_json"}}},
		{"json: syntax, an escaped character", `invalid character '\n' in string literal`, []goIssue{{Code: "invalid_json"}}},
		{"json: cut short (Unmarshal)", "unexpected end of JSON input", []goIssue{{Code: "invalid_json"}}},
		// echo
		{"echo: binder type", "Unmarshal type error: expected=int, got=string, field=quantity, offset=45",
			[]goIssue{{Path: "/quantity", Code: "type", Expected: `"integer"`}}},
		{"echo: binder type, nested", "Unmarshal type error: expected=int, got=string, field=lines.quantity, offset=77",
			[]goIssue{{Field: "lines.quantity", Code: "type"}}},
		{"echo: binder syntax", "Syntax error: offset=13, error=invalid character ',' looking for beginning of object key string",
			[]goIssue{{Code: "invalid_json"}}},
		{"echo: HTTPError around the binder's", "code=400, message=Unmarshal type error: expected=int, got=string, field=quantity, offset=45, internal=json: cannot unmarshal string into Go struct field CreateItem.quantity of type int",
			[]goIssue{{Path: "/quantity", Code: "type", Expected: `"integer"`}}},
		{"echo: HTTPError around the validator's", "code=400, message=Key: 'CreateItem.SKU' Error:Field validation for 'SKU' failed on the 'required' tag",
			[]goIssue{{Field: "SKU", Code: "required"}}},
		// fiber's QueryParser (gorilla/schema)
		{"fiber: query parameter type", `failed to decode: schema: error converting value for "limit"`,
			[]goIssue{{Path: "/limit", Code: "type"}}},
		// kin-openapi
		{"kin: enum", `request body has an error: doesn't match schema #/components/schemas/CreateItem: Error at "/currency": value is not one of the allowed values ["usd","eur"]`,
			[]goIssue{{Path: "/currency", Code: "enum", Allowed: []string{`"usd"`, `"eur"`}}}},
		{"kin: enum of numbers, inline schema", `request body has an error: doesn't match schema: Error at "/size": value is not one of the allowed values [1,2,3]`,
			[]goIssue{{Path: "/size", Code: "enum", Allowed: []string{"1", "2", "3"}}}},
		{"kin: maximum", `request body has an error: doesn't match schema #/components/schemas/CreateItem: Error at "/quantity": number must be at most 100`,
			[]goIssue{{Path: "/quantity", Code: "maximum", Expected: `{"maximum":100}`}}},
		{"kin: exclusive minimum, %g", `request body has an error: doesn't match schema: Error at "/x": number must be more than 1e+06`,
			[]goIssue{{Path: "/x", Code: "exclusiveMinimum", Expected: `{"exclusiveMinimum":1e+06}`}}},
		{"kin: nested required", `request body has an error: doesn't match schema #/components/schemas/CreateItem: Error at "/lines/1/sku": property "sku" is missing`,
			[]goIssue{{Path: "/lines/1/sku", Code: "required"}}},
		{"kin: unsupported member", `request body has an error: doesn't match schema: Error at "/lines/0": property "note" is unsupported`,
			[]goIssue{{Path: "/lines/0/note", Code: "additionalProperties"}}},
		{"kin: type", `request body has an error: doesn't match schema: Error at "/sku": value must be a string`,
			[]goIssue{{Path: "/sku", Code: "type", Expected: `"string"`}}},
		{"kin: pattern", `request body has an error: doesn't match schema: Error at "/sku": string doesn't match the regular expression "^[A-Z]+"$"`,
			[]goIssue{{Path: "/sku", Code: "pattern", Expected: `{"pattern":"^[A-Z]+\"$"}`}}},
		{"kin: minLength", `request body has an error: doesn't match schema: Error at "/sku": minimum string length is 2`,
			[]goIssue{{Path: "/sku", Code: "minLength", Expected: `{"minLength":2}`}}},
		{"kin: a reason it does not know", `request body has an error: doesn't match schema: Error at "/x": value doesn't match any schema from "oneOf"`,
			[]goIssue{{Path: "/x"}}},
		{"kin: not JSON", "request body has an error: failed to decode request body: invalid character ',' looking for beginning of object key string",
			[]goIssue{{Code: "invalid_json"}}},
		{"kin: query bound", `parameter "limit" in query has an error: number must be at most 100`,
			[]goIssue{{Path: "/limit", Code: "maximum", Expected: `{"maximum":100}`}}},
		{"kin: query type", `parameter "limit" in query has an error: value ten: an invalid integer: invalid syntax`,
			[]goIssue{{Path: "/limit", Code: "type", Expected: `"integer"`, Received: `"ten"`}}},
		{"kin: header required", `parameter "X-Tenant" in header has an error: value is required but missing`,
			[]goIssue{{Path: "/X-Tenant", Code: "required"}}},
		// ogen
		{"ogen: enum", "operation CreateItem: decode request: validate: invalid: currency (invalid value: gbp)",
			[]goIssue{{Path: "/currency", Code: "enum"}}},
		{"ogen: nested, several", "operation CreateItem: decode request: validate: invalid: lines (invalid: [1] (invalid: quantity (int: value 500 greater than 100))), currency (invalid value: gbp)",
			[]goIssue{{Path: "/lines/1/quantity", Received: "500"}, {Path: "/currency", Code: "enum"}}},
		{"ogen: an exclusive bound met", "operation CreateItem: decode request: validate: invalid: quantity (int: value 100 greater than 100)",
			[]goIssue{{Path: "/quantity", Code: "exclusiveMaximum", Expected: `{"exclusiveMaximum":100}`, Received: "100"}}},
		{"ogen: required", "operation CreateItem: decode request: decode application/json: invalid: sku (field required)",
			[]goIssue{{Path: "/sku", Code: "required"}}},
		{"ogen: required inside a member", `operation CreateItem: decode request: decode application/json: decode CreateItem: callback: decode field "lines": callback: invalid: sku (field required)`,
			[]goIssue{{Code: "required"}}},
		{"ogen: a value of another kind", `operation CreateItem: decode request: decode application/json: decode CreateItem: callback: decode field "quantity": unexpected byte 34 '"' at 40`,
			[]goIssue{{Path: "/quantity", Code: "type"}}},
		{"ogen: a value of another kind inside a member", `operation CreateItem: decode request: decode application/json: decode CreateItem: callback: decode field "lines": callback: decode Line: callback: decode field "quantity": unexpected byte 116 't' at 74`,
			[]goIssue{{Field: "lines.quantity", Code: "type"}}},
		{"ogen: query bound", `operation ListItems: decode params: query: "limit": int: value 500 greater than 100`,
			[]goIssue{{Path: "/limit", Received: "500"}}},
		{"ogen: query type", `operation ListItems: decode params: query: "limit": strconv.Atoi: parsing "ten": invalid syntax`,
			[]goIssue{{Path: "/limit", Code: "type", Expected: `"integer"`, Received: `"ten"`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, status := range []int{400, 500} {
				for form, b := range goBodies(t, c.text) {
					e, ok := remedy.Parse(status, b.header, b.body)
					require.True(t, ok)
					assert.Equal(t, b.d, e.Dialect, form)
					assert.Equal(t, remedy.CategoryValidation, e.Category, "%s %d", form, status)
					assert.False(t, e.Retryable, "%s %d: the same request fails the same way", form, status)
					assert.Equal(t, c.issues, goIssues(e), "%s %d", form, status)
					v := remedy.Classify(status, b.header, b.body)
					assert.Equal(t, e.Retryable, v.Retryable, "%s %d: Classify", form, status)
					assert.Equal(t, e.Category, v.Category, "%s %d: Classify", form, status)
				}
			}
		})
	}
}

// TestParseGoTextsEOF reads the words any reader says of a body cut short only at a client
// error's status: at a 5xx they may be the server's own failure.
func TestParseGoTextsEOF(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"unexpected EOF", "EOF"} {
		e, ok := remedy.Parse(400, nil, []byte(text))
		require.True(t, ok)
		assert.Equal(t, []goIssue{{Code: "invalid_json"}}, goIssues(e), text)
		e, ok = remedy.Parse(500, nil, []byte(text))
		require.True(t, ok)
		assert.Empty(t, e.Issues, text)
		assert.True(t, e.Retryable, text)
	}
}

// TestParseGoTextsNearMiss: a text that differs from a template by a word, a quote or extra
// text is the app's own words, not read.
func TestParseGoTextsNearMiss(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		// go-playground/validator
		"Key: 'CreateItem.SKU' Error:Field validation for 'SKU' failed on the 'required' tag.",
		"Key: \"CreateItem.SKU\" Error:Field validation for 'SKU' failed on the 'required' tag",
		"Key: 'CreateItem.SKU' Error: Field validation for 'SKU' failed on the 'required' tag",
		"Key: 'CreateItem.SKU' Error:Field validation for 'Name' failed on the 'required' tag",
		"Key: 'CreateItem.SKU' Error:Field validation for 'SKU' failed on the 'required' rule",
		"Key: 'CreateItem.SKU' Error:Field validation for 'SKU' failed on the 'required' tag\nplease fix it",
		"Key: 'CreateItem.SKU' Error:Field validation for 'SKU' failed on the 'two words' tag",
		"[SKU]: '' | Needs to implement 'required' or [Quantity]: '500' | Needs to implement 'max'",
		"[SKU]: '' | Must implement 'required'",
		// encoding/json
		"json: cannot unmarshal text into Go struct field CreateItem.quantity of type int",
		"json: cannot unmarshal string into Go struct field CreateItem.quantity of kind int",
		"json: cannot unmarshal string into a Go struct field CreateItem.quantity of type int",
		"invalid character ',' looking for the beginning of object key string",
		"invalid character ',' looking for beginning of object key string, try again",
		"invalid char ',' looking for beginning of value",
		"invalid character , looking for beginning of value",
		"unexpected end of input",
		// echo
		"Unmarshal type error: expected=int, got=text, field=quantity, offset=45",
		"Unmarshal type error: expected=int, got=string, field=quantity",
		"Unmarshal type error: expected=int, got=string, field=quantity, offset=forty",
		"Syntax error: offset=13, error=something went wrong",
		"code=4000, message=Key: 'CreateItem.SKU' Error:Field validation for 'SKU' failed on the 'required' tag",
		"code=400, message=the moon is full",
		// gorilla/schema through fiber
		`failed to decode: schema: error converting value for "limit" and more`,
		`failed to decode: schema: error converting values for "limit"`,
		// kin-openapi
		`request body has an error: does not match schema: Error at "/quantity": number must be at most 100`,
		`request body has an error: doesn't match schemas: Error at "/quantity": number must be at most 100`,
		`request body has a problem: doesn't match schema: Error at "/quantity": number must be at most 100`,
		`parameter "limit" in body has an error: number must be at most 100`,
		`parameter limit in query has an error: number must be at most 100`,
		`parameter "limit" in query had an error: number must be at most 100`,
		"request body has an error: failed to decode request body: the body is on holiday",
		// ogen
		"operation CreateItem: decode request: validated: invalid: currency (invalid value: gbp)",
		"operation CreateItem: decode request: validate: invalid: currency (invalid value: gbp",
		"operation CreateItem: decode request: validate: invalid: currency (invalid value: gbp) and more",
		"operation CreateItem: decode request: validate: not valid: currency (invalid value: gbp)",
		`operation ListItems: decode params: body: "limit": int: value 500 greater than 100`,
		`operation ListItems: decode params: query: limit: int: value 500 greater than 100`,
		// ogen's decoder: a byte that begins no JSON value, a byte not the one it names, a
		// step of the chain that is not the decoders'
		`operation CreateItem: decode request: decode application/json: decode CreateItem: field name: unexpected byte 44 ',' at 12`,
		`operation CreateItem: decode request: decode application/json: decode CreateItem: callback: decode field "quantity": unexpected byte 44 ',' at 40`,
		`operation CreateItem: decode request: decode application/json: decode CreateItem: callback: decode field "quantity": unexpected byte 35 '"' at 40`,
		`operation CreateItem: decode request: decode application/json: decode CreateItem: callback: decode field "quantity": leading zero: unexpected byte 48 '0' at 40`,
		`operation CreateItem: decode request: decode application/json: decode CreateItem: callback: decode field "quantity": unexpected byte 34 '"' at 40 and more`,
		`operation CreateItem: decode request: decode application/json: decode Create Item: callback: decode field "quantity": unexpected byte 34 '"' at 40`,
		`operation CreateItem: decode request: decode application/json: unexpected byte 34 '"' at 40`,
	} {
		for form, b := range goBodies(t, text) {
			e, ok := remedy.Parse(400, b.header, b.body)
			require.True(t, ok)
			assert.Empty(t, e.Issues, "%s: %s", form, text)
			e, ok = remedy.Parse(500, b.header, b.body)
			require.True(t, ok)
			assert.Empty(t, e.Issues, "%s: %s", form, text)
			assert.True(t, e.Retryable, "%s: a 500 in the app's own words keeps its status's default: %s", form, text)
		}
	}
}

// TestParseGoTextsFactsLeftOut: what the texts do not state is not invented: no bound for
// validator's max, no allowed values for its oneof, no path through an array encoding/json
// dropped the index of, no keyword for ogen's integer bound.
func TestParseGoTextsFactsLeftOut(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"Key: 'CreateItem.quantity' Error:Field validation for 'quantity' failed on the 'max' tag",
		"Key: 'CreateItem.currency' Error:Field validation for 'currency' failed on the 'oneof' tag",
		"json: cannot unmarshal string into Go struct field Line.lines.quantity of type int",
		"operation CreateItem: decode request: validate: invalid: quantity (int: value 500 greater than 100)",
	} {
		e, ok := remedy.Parse(400, nil, []byte(text))
		require.True(t, ok)
		require.Len(t, e.Issues, 1, text)
		is := e.Issues[0]
		assert.Empty(t, is.Expected, text)
		assert.Empty(t, is.AllowedValues, text)
		assert.NotContains(t, is.Path, "lines", text)
	}
}

// TestClassifyGoTextsAllocatesNothing: the classification path reads the Go texts without
// allocating (bodies without escapes: an escaped string is unescaped into a copy).
func TestClassifyGoTextsAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not the program's under the race detector")
	}
	for _, b := range []string{
		"Key: 'CreateItem.lines[1].sku' Error:Field validation for 'sku' failed on the 'required' tag",
		"json: cannot unmarshal string into Go struct field CreateItem.quantity of type int",
		"invalid character ',' looking for beginning of object key string",
		`{"message":"Unmarshal type error: expected=int, got=string, field=quantity, offset=45"}`,
		`{"error_message":"operation CreateItem: decode request: validate: invalid: lines (invalid: [1] (invalid: quantity (int: value 500 greater than 100)))"}`,
		"[SKU]: '' | Needs to implement 'required' and [Quantity]: '500' | Needs to implement 'max'",
		`failed to decode: schema: error converting value for "limit"`,
	} {
		body := []byte(b)
		if v := remedy.Classify(500, nil, body); v.Category != remedy.CategoryValidation || v.Retryable {
			t.Fatalf("%s: classified %+v", b, v)
		}
		if n := testing.AllocsPerRun(50, func() { remedy.Classify(500, nil, body) }); n != 0 {
			t.Errorf("%s: Classify allocated %.0f times per call, want 0", b, n)
		}
	}
}
