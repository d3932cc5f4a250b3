package remedy_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
)

// TestParseMCPGoTexts reads mcp-go's argument failures from a tool error's text: its input
// schema validation as v1.2.1 prints it (Go values) and as the validator words it (what a later
// mcp-go may print), the argument accessors' errors and a typed handler's binding failure. The
// recorded ones are in testdata/envelopes/mcp/mcp-go-*.
func TestParseMCPGoTexts(t *testing.T) {
	t.Parallel()
	type issue struct {
		Path, Code, Message string
		Expected, Received  string
		Allowed             []string
	}
	cases := []struct {
		name, text string
		issues     []issue
	}{
		{"numbers: bound or multipleOf, unsaid", "input schema validation failed: /amount: &{Got:3/2 Want:5/1}; /n: &{Got:-7/1 Want:0/1}",
			[]issue{{Path: "/amount", Message: "got 1.5, want 5", Received: "1.5"}, {Path: "/n", Message: "got -7, want 0", Received: "-7"}}},
		{"enum of numbers", "input schema validation failed: /size: &{Got:7 Want:[1 2 3]}",
			[]issue{{Path: "/size", Code: "enum", Message: "value must be one of 1, 2, 3", Received: "7", Allowed: []string{"1", "2", "3"}}}},
		{"enum value refused for its type", "input schema validation failed: /size: &{Got:2 Want:[1 2 3]}",
			[]issue{{Path: "/size", Code: "enum", Message: "value must be one of 1, 2, 3"}}},
		{"type list", "input schema validation failed: /note: &{Got:number Want:[string null]}",
			[]issue{{Path: "/note", Code: "type", Message: "got number, want string or null", Expected: `{"type":["string","null"]}`}}},
		{"a value with a semicolon", "input schema validation failed: /memo: &{Got:a; b Want:^[a-z]+$}; /x: &{Missing:[y]}",
			[]issue{{Path: "/memo", Code: "pattern", Message: "'a; b' does not match pattern '^[a-z]+$'", Expected: `{"pattern":"^[a-z]+$"}`, Received: `"a; b"`},
				{Path: "/x/y", Code: "required", Message: "missing property 'y'"}}},
		{"format, unique items, dependent required, unknown members", "input schema validation failed: /email: &{Got:ada Want:email Err:missing @}; /tags: &{Duplicates:[0 2]}; <root>: &{Prop:card Missing:[cvc]}; <root>: &{Properties:[a b/c]}",
			[]issue{{Path: "/email", Code: "format", Message: "'ada' is not valid email", Expected: `{"format":"email"}`},
				{Path: "/tags", Code: "uniqueItems", Message: "items at 0 and 2 are equal"},
				{Path: "/cvc", Code: "required", Message: "missing property 'cvc'"},
				{Path: "/a", Code: "additionalProperties", Message: "additional properties 'a' not allowed"},
				{Path: "/b~1c", Code: "additionalProperties", Message: "additional properties 'b/c' not allowed"}}},
		{"as the validator words it", "input schema validation failed: <root>: missing properties 'customer_id', 'amount'; /currency: value must be one of 'usd', 'eur'; /n: value must be one of 1, 2; /amount: got string, want integer; /qty: minimum: got 0, want 1; /id: 'CUS-9' does not match pattern '^cus_'; <root>: additional properties 'note' not allowed",
			[]issue{{Path: "/customer_id", Code: "required", Message: "missing property 'customer_id'"},
				{Path: "/amount", Code: "required", Message: "missing property 'amount'"},
				{Path: "/currency", Code: "enum", Message: "value must be one of 'usd', 'eur'", Allowed: []string{`"usd"`, `"eur"`}},
				{Path: "/n", Code: "enum", Message: "value must be one of 1, 2", Allowed: []string{"1", "2"}},
				{Path: "/amount", Code: "type", Message: "got string, want integer", Expected: `"integer"`},
				{Path: "/qty", Code: "minimum", Message: "minimum: got 0, want 1", Expected: `{"minimum":1}`},
				{Path: "/id", Code: "pattern", Message: "'CUS-9' does not match pattern '^cus_'", Expected: `{"pattern":"^cus_"}`, Received: `"CUS-9"`},
				{Path: "/note", Code: "additionalProperties", Message: "additional properties 'note' not allowed"}}},
		{"a violation it does not know", "input schema validation failed: /x: 'oneOf' failed, none matched",
			[]issue{{Path: "/x", Message: "'oneOf' failed, none matched"}}},
		{"accessor: missing", `required argument "invoice_id" not found`,
			[]issue{{Path: "/invoice_id", Code: "required", Message: `required argument "invoice_id" not found`}}},
		{"accessor: type", `argument "amount" cannot be converted to int`,
			[]issue{{Path: "/amount", Code: "type", Message: `argument "amount" cannot be converted to int`, Expected: `"integer"`}}},
		{"accessor: slice item", `item 2 in argument "tags" is not a string`,
			[]issue{{Path: "/tags/2", Code: "type", Message: `item 2 in argument "tags" is not a string`, Expected: `"string"`}}},
		{"accessor: slice", `argument "ids" is not a string slice`,
			[]issue{{Path: "/ids", Code: "type", Message: `argument "ids" is not a string slice`, Expected: `"array"`}}},
		// encoding/json's text: one member deep, the path; deeper, none (an array's index may
		// have been dropped from it).
		{"typed handler: member", "failed to bind arguments: json: cannot unmarshal string into Go struct field chargeArgs.amount of type int",
			[]issue{{Path: "/amount", Code: "type", Message: "json: cannot unmarshal string into Go struct field chargeArgs.amount of type int", Expected: `"integer"`}}},
		{"typed handler: nested member", "failed to bind arguments: json: cannot unmarshal number 1.5 into Go struct field order.item.qty of type int64",
			[]issue{{Code: "type", Message: "json: cannot unmarshal number 1.5 into Go struct field order.item.qty of type int64"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, err := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": c.text}}, "isError": true})
			require.NoError(t, err)
			e, ok := remedy.Parse(0, nil, body)
			require.True(t, ok)
			assert.Equal(t, remedy.DialectMCP, e.Dialect)
			assert.Equal(t, "invalid_arguments", e.Code)
			assert.Equal(t, remedy.CategoryValidation, e.Category)
			assert.False(t, e.Retryable, "the same arguments fail the same way")
			var got []issue
			for _, is := range e.Issues {
				g := issue{Path: is.Path, Code: is.Code, Message: is.Message, Expected: string(is.Expected), Received: string(is.Received)}
				for _, v := range is.AllowedValues {
					g.Allowed = append(g.Allowed, string(v))
				}
				got = append(got, g)
			}
			assert.Equal(t, c.issues, got)
		})
	}

	// Texts that only look like them are a tool's own words.
	for _, text := range []string{
		`required argument "x" was not given`,
		`argument "x" is not a unicorn`,
		"failed to bind arguments: the moon is full",
		"item two in argument \"x\" is not a string",
	} {
		body, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true})
		e, ok := remedy.Parse(0, nil, body)
		require.True(t, ok)
		assert.Equal(t, "tool_error", e.Code, text)
		assert.Empty(t, e.Issues, text)
	}
}
