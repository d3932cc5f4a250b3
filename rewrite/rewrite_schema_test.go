package rewrite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/rewrite"
)

// itemSchema is the arguments schema of the small API the frameworks serve: an item with its
// lines, the line's schema behind a $ref, as Call.Schema or an MCP tool's inputSchema has it.
const itemSchema = `{"type":"object","properties":{
	"sku":{"type":"string","maxLength":8},
	"quantity":{"type":"integer","minimum":1,"maximum":100},
	"currency":{"type":"string","enum":["usd","eur"]},
	"color":{"type":"string","enum":["red","green"],"default":"red"},
	"unitPrice":{"type":"number"},
	"lines":{"type":"array","items":{"$ref":"#/$defs/Line"}}},
	"required":["sku","quantity"],
	"$defs":{"Line":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","maximum":10}},"required":["sku"]}}}`

// schemaCase is one failure, as issues, against args and a schema: the repair expected, or
// the account of what blocked it.
type schemaCase struct {
	name    string
	issues  []remedy.Issue
	schema  string // "" for no schema
	args    string
	want    string       // "" when the rewriter must give up
	changes []changeView // the changes it must report
	blocked []rewrite.Blocked
	why     string // a part of the first change's Why
}

func runSchemaCases(t *testing.T, tests []schemaCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &rewrite.Request{Operation: "create_item", Args: json.RawMessage(tt.args), Attempt: 1,
				Envelope: &remedy.Envelope{Status: 400, Code: "bad_request", Issues: tt.issues}}
			if tt.schema != "" {
				r.Schema = json.RawMessage(tt.schema)
			}
			out, err := rewrite.Default.Rewrite(context.Background(), r)
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, out, "repaired: %s", out)
				assert.Nil(t, r.Changes)
				assert.Equal(t, tt.blocked, r.Blocked)
				return
			}
			require.NotNil(t, out, "blocked: %+v", r.Blocked)
			assert.JSONEq(t, tt.want, string(out))
			assert.Equal(t, tt.changes, viewChanges(r.Changes))
			assert.Nil(t, r.Blocked, "a repair is blocked by nothing")
			if tt.why != "" {
				assert.Contains(t, r.Changes[0].Why, tt.why)
			}
			if err := checkChanges([]byte(tt.args), out, r.Changes); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestDefaultRewriterSchemaFacts: the operation's schema completes an issue that names only the
// field, and a server's own facts win where both speak.
func TestDefaultRewriterSchemaFacts(t *testing.T) {
	runSchemaCases(t, []schemaCase{{
		name:    "a bare enum issue: the enum from the schema",
		issues:  []remedy.Issue{{Path: "/color", Code: "enum"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"color":"RED"}`,
		want:    `{"sku":"A","quantity":1,"color":"red"}`,
		changes: []changeView{lossless("/color", "enum_match", `"RED"`, `"red"`)},
	}, {
		name:    "gin's oneof with the tag's name as path",
		issues:  []remedy.Issue{{Path: "/currency", Code: "oneof", Message: "Key: 'CreateItem.currency' Error:Field validation for 'currency' failed on the 'oneof' tag"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"currency":"USD"}`,
		want:    `{"sku":"A","quantity":1,"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"USD"`, `"usd"`)},
	}, {
		name:    "a type issue without Expected: the type from the schema",
		issues:  []remedy.Issue{{Path: "/quantity", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":"5"}`,
		want:    `{"sku":"A","quantity":5}`,
		changes: []changeView{lossless("/quantity", "coerce", `"5"`, `5`)},
	}, {
		name:    "an item's field through the $ref of the items",
		issues:  []remedy.Issue{{Path: "/lines/1/qty", Code: "invalid_type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":1},{"sku":"y","qty":"2"}]}`,
		want:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":1},{"sku":"y","qty":2}]}`,
		changes: []changeView{lossless("/lines/1/qty", "coerce", `"2"`, `2`)},
	}, {
		name:    "a clamp from the schema's maximum says the bound",
		issues:  []remedy.Issue{{Path: "/quantity", Code: "max"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":500}`,
		want:    `{"sku":"A","quantity":100}`,
		changes: []changeView{lossy("/quantity", "clamp", `500`, `100`)},
		why:     "max; the schema allows at most 100",
	}, {
		name:    "a truncation from the schema's maxLength says the length",
		issues:  []remedy.Issue{{Path: "/sku", Code: "too_long"}},
		schema:  itemSchema,
		args:    `{"sku":"ABCDEFGHIJ","quantity":1}`,
		want:    `{"sku":"ABCDEFGH","quantity":1}`,
		changes: []changeView{lossy("/sku", "truncate", `"ABCDEFGHIJ"`, `"ABCDEFGH"`)},
		why:     "at most 8 characters",
	}, {
		name:    "a missing value gets the schema's default",
		issues:  []remedy.Issue{{Path: "/color", Code: "required"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1}`,
		want:    `{"sku":"A","quantity":1,"color":"red"}`,
		changes: []changeView{lossless("/color", "default", ``, `"red"`)},
	}, {
		name:    "the server's allowed values win over the schema's enum",
		issues:  []remedy.Issue{{Path: "/currency", Code: "enum", AllowedValues: []json.RawMessage{json.RawMessage(`"GBP"`)}}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"currency":"usd"}`,
		want:    `{"sku":"A","quantity":1,"currency":"GBP"}`,
		changes: []changeView{lossless("/currency", "only_allowed_value", `"usd"`, `"GBP"`)},
	}, {
		name:    "the server's bound wins over the schema's, and its message says it",
		issues:  []remedy.Issue{{Path: "/quantity", Code: "maximum", Message: "must be at most 50", Expected: json.RawMessage(`{"maximum":50}`)}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":70}`,
		want:    `{"sku":"A","quantity":50}`,
		changes: []changeView{lossy("/quantity", "clamp", `70`, `50`)},
	}, {
		name:   "the server's type wins over the schema's",
		issues: []remedy.Issue{{Path: "/sku", Code: "type", Expected: json.RawMessage(`"integer"`)}},
		schema: itemSchema,
		args:   `{"sku":"12","quantity":1}`,
		want:   `{"sku":12,"quantity":1}`,
		changes: []changeView{
			lossless("/sku", "coerce", `"12"`, `12`)},
	}, {
		name:   "the server's exclusive bound is not tightened by the schema's",
		issues: []remedy.Issue{{Path: "/quantity", Code: "maximum", Expected: json.RawMessage(`{"exclusiveMaximum":300}`)}},
		schema: itemSchema,
		args:   `{"sku":"A","quantity":500}`,
		want:   `{"sku":"A","quantity":299}`,
		changes: []changeView{
			lossy("/quantity", "clamp", `500`, `299`)},
	}, {
		name:    "a value outside the schema's enum matching none gets a proposed choice",
		issues:  []remedy.Issue{{Path: "/color", Code: "enum"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"color":"purple"}`,
		want:    `{"sku":"A","quantity":1,"color":"red"}`,
		changes: []changeView{lossy("/color", "choose_allowed", `"purple"`, `"red"`)},
	}, {
		name:    "without a schema a bare issue is not repaired, and says why",
		issues:  []remedy.Issue{{Path: "/color", Code: "enum"}},
		args:    `{"sku":"A","quantity":1,"color":"RED"}`,
		blocked: []rewrite.Blocked{{Path: "/color", Code: "enum", Why: "no allowed value or type is known"}},
	}, {
		name:    "a schema that says nothing of the field",
		issues:  []remedy.Issue{{Path: "/note", Code: "invalid"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"note":"x"}`,
		blocked: []rewrite.Blocked{{Path: "/note", Code: "invalid", Why: "no allowed value or type is known"}},
	}, {
		name:    "a value that no conversion makes an integer",
		issues:  []remedy.Issue{{Path: "/quantity", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":"two"}`,
		blocked: []rewrite.Blocked{{Path: "/quantity", Code: "type", Why: "the value cannot be converted to integer without loss"}},
	}, {
		name:    "a missing value without a default",
		issues:  []remedy.Issue{{Path: "/currency", Code: "required"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1}`,
		blocked: []rewrite.Blocked{{Path: "/currency", Code: "required", Why: "the value is missing, and no default is known"}},
	}, {
		name:   "every problem is named, not only the first",
		issues: []remedy.Issue{{Path: "/note", Code: "invalid"}, {Path: "/color", Code: "enum"}, {Path: "/lines/5/qty", Code: "max"}},
		schema: itemSchema,
		args:   `{"sku":"A","quantity":1,"note":"x","color":"RED","lines":[]}`,
		blocked: []rewrite.Blocked{
			{Path: "/note", Code: "invalid", Why: "no allowed value or type is known"},
			{Path: "/lines/5/qty", Code: "max", Why: "the path is not in the arguments"}},
	}, {
		name:    "a schema that is not an object says nothing",
		issues:  []remedy.Issue{{Path: "/color", Code: "enum"}},
		schema:  `["red"]`,
		args:    `{"color":"RED"}`,
		blocked: []rewrite.Blocked{{Path: "/color", Code: "enum", Why: "no allowed value or type is known"}},
	}, {
		name:    "a schema that is not JSON says nothing",
		issues:  []remedy.Issue{{Path: "/color", Code: "enum"}},
		schema:  `{"properties":{"color":{"enum":["red"]}}`,
		args:    `{"color":"RED"}`,
		blocked: []rewrite.Blocked{{Path: "/color", Code: "enum", Why: "no allowed value or type is known"}},
	}})
}

// TestDefaultRewriterSchemaPaths: what a failure names in another form becomes the schema's
// pointer when exactly one property fits, and stays as written otherwise.
func TestDefaultRewriterSchemaPaths(t *testing.T) {
	runSchemaCases(t, []schemaCase{{
		name:    "a Go namespace's fields",
		issues:  []remedy.Issue{{Field: "Lines[1].Qty", Code: "max"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":1},{"sku":"y","qty":50}]}`,
		want:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":1},{"sku":"y","qty":10}]}`,
		changes: []changeView{lossy("/lines/1/qty", "clamp", `50`, `10`)},
		why:     "at most 10",
	}, {
		name:    "a Go namespace with its type's name",
		issues:  []remedy.Issue{{Field: "CreateItem.Lines[1].SKU", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"x"},{"sku":7}]}`,
		want:    `{"sku":"A","quantity":1,"lines":[{"sku":"x"},{"sku":"7"}]}`,
		changes: []changeView{lossless("/lines/1/sku", "coerce", `7`, `"7"`)},
	}, {
		name:    "a Go field name in another case",
		issues:  []remedy.Issue{{Field: "Currency", Code: "oneof"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"currency":"EUR"}`,
		want:    `{"sku":"A","quantity":1,"currency":"eur"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"EUR"`, `"eur"`)},
	}, {
		name:    "a Go name for a camelCase property",
		issues:  []remedy.Issue{{Field: "UnitPrice", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"unitPrice":"2.5"}`,
		want:    `{"sku":"A","quantity":1,"unitPrice":2.5}`,
		changes: []changeView{lossless("/unitPrice", "coerce", `"2.5"`, `2.5`)},
	}, {
		name:    "a decoder's path without its index: the one element that breaks the schema",
		issues:  []remedy.Issue{{Field: "lines.qty", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":1},{"sku":"y","qty":"2"},{"sku":"z"}]}`,
		want:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":1},{"sku":"y","qty":2},{"sku":"z"}]}`,
		changes: []changeView{lossless("/lines/1/qty", "coerce", `"2"`, `2`)},
	}, {
		name:    "a decoder's path with its type's name, and an array of one element",
		issues:  []remedy.Issue{{Field: "Line.lines.qty", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"y","qty":"2"}]}`,
		want:    `{"sku":"A","quantity":1,"lines":[{"sku":"y","qty":2}]}`,
		changes: []changeView{lossless("/lines/0/qty", "coerce", `"2"`, `2`)},
	}, {
		name:    "an index that would be a guess: two elements break the schema",
		issues:  []remedy.Issue{{Field: "lines.qty", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":"1"},{"sku":"y","qty":"2"}]}`,
		blocked: []rewrite.Blocked{{Field: "lines.qty", Code: "type", Why: "the field leaves out an array index, and several elements could be the one"}},
	}, {
		name:    "an index that would be a guess: no element breaks the schema",
		issues:  []remedy.Issue{{Field: "lines.qty", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":1},{"sku":"y","qty":2}]}`,
		blocked: []rewrite.Blocked{{Field: "lines.qty", Code: "type", Why: "the field leaves out an array index, and no element breaks the schema there"}},
	}, {
		name:    "a missing required member: the one element that lacks it",
		issues:  []remedy.Issue{{Field: "lines.sku", Code: "required"}},
		schema:  strings.Replace(itemSchema, `"sku":{"type":"string"}`, `"sku":{"type":"string","default":"none"}`, 1),
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"x"},{"qty":2}]}`,
		want:    `{"sku":"A","quantity":1,"lines":[{"sku":"x"},{"qty":2,"sku":"none"}]}`,
		changes: []changeView{lossless("/lines/1/sku", "default", ``, `"none"`)},
	}, {
		name:    "ASP.NET's property in another case",
		issues:  []remedy.Issue{{Path: "/Quantity", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":"5"}`,
		want:    `{"sku":"A","quantity":5}`,
		changes: []changeView{lossless("/quantity", "coerce", `"5"`, `5`)},
	}, {
		name:    "protobuf's snake_case for a camelCase property",
		issues:  []remedy.Issue{{Path: "/unit_price", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"unitPrice":"3"}`,
		want:    `{"sku":"A","quantity":1,"unitPrice":3}`,
		changes: []changeView{lossless("/unitPrice", "coerce", `"3"`, `3`)},
	}, {
		name:    "a location word before the path",
		issues:  []remedy.Issue{{Path: "/body/quantity", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":"5"}`,
		want:    `{"sku":"A","quantity":5}`,
		changes: []changeView{lossless("/quantity", "coerce", `"5"`, `5`)},
	}, {
		name:    "a location word the schema names is a property",
		issues:  []remedy.Issue{{Path: "/body/size", Code: "type"}},
		schema:  `{"type":"object","properties":{"body":{"type":"object","properties":{"size":{"type":"integer"}}},"size":{"type":"integer"}}}`,
		args:    `{"body":{"size":"2"},"size":"3"}`,
		want:    `{"body":{"size":2},"size":"3"}`,
		changes: []changeView{lossless("/body/size", "coerce", `"2"`, `2`)},
	}, {
		name:    "two issues naming one field in two forms are one problem",
		issues:  []remedy.Issue{{Field: "Color", Code: "oneof"}, {Path: "/color", Code: "enum", Message: "must be one of red, green"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"color":"GREEN"}`,
		want:    `{"sku":"A","quantity":1,"color":"green"}`,
		changes: []changeView{lossless("/color", "enum_match", `"GREEN"`, `"green"`)},
		why:     "oneof; must be one of red, green",
	}, {
		name:    "two properties in different cases: a Go name matches both",
		issues:  []remedy.Issue{{Field: "Color", Code: "oneof"}},
		schema:  `{"type":"object","properties":{"Color":{"enum":["red"]},"color":{"enum":["blue"]}}}`,
		args:    `{"color":"BLUE"}`,
		blocked: []rewrite.Blocked{{Field: "Color", Code: "oneof", Why: "the field matches several properties of the schema"}},
	}, {
		name:    "two properties in different cases: a path in a third case matches both",
		issues:  []remedy.Issue{{Path: "/COLOR", Code: "enum"}},
		schema:  `{"type":"object","properties":{"Color":{"enum":["red"]},"color":{"enum":["blue"]}}}`,
		args:    `{"color":"BLUE"}`,
		blocked: []rewrite.Blocked{{Path: "/COLOR", Code: "enum", Why: "the field matches several properties of the schema"}},
	}, {
		name:    "a path spelled exactly as one of them is that one",
		issues:  []remedy.Issue{{Path: "/Color", Code: "enum"}},
		schema:  `{"type":"object","properties":{"Color":{"enum":["red"]},"color":{"enum":["blue"]}}}`,
		args:    `{"Color":"RED","color":"blue"}`,
		want:    `{"Color":"red","color":"blue"}`,
		changes: []changeView{lossless("/Color", "only_allowed_value", `"RED"`, `"red"`)},
	}, {
		name:    "a path the arguments hold stays as written",
		issues:  []remedy.Issue{{Path: "/Quantity", Code: "type", Expected: json.RawMessage(`"integer"`)}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"Quantity":"5"}`,
		want:    `{"sku":"A","quantity":1,"Quantity":5}`,
		changes: []changeView{lossless("/Quantity", "coerce", `"5"`, `5`)},
	}, {
		name:    "a field that names no property",
		issues:  []remedy.Issue{{Field: "Weight", Code: "max"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"weight":5}`,
		blocked: []rewrite.Blocked{{Field: "Weight", Code: "max", Why: "the field names no property of the schema"}},
	}, {
		name:    "a field without a schema",
		issues:  []remedy.Issue{{Field: "Lines[1].SKU", Code: "required"}},
		args:    `{"lines":[{},{}]}`,
		blocked: []rewrite.Blocked{{Field: "Lines[1].SKU", Code: "required", Why: "the field is not a path into the arguments, and no readable schema maps it onto one"}},
	}, {
		name:    "a field through an array the arguments lack",
		issues:  []remedy.Issue{{Field: "lines.qty", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1}`,
		blocked: []rewrite.Blocked{{Field: "lines.qty", Code: "type", Why: "the field goes through an array the arguments do not hold"}},
	}, {
		name:    "a field that cannot be read",
		issues:  []remedy.Issue{{Field: "lines..qty", Code: "type"}, {Field: "lines[1", Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1}`,
		blocked: []rewrite.Blocked{{Field: "lines..qty", Code: "type", Why: "the field cannot be read as a path"}, {Field: "lines[1", Code: "type", Why: "the field cannot be read as a path"}},
	}, {
		name:   "a mapped field that still lacks a fact",
		issues: []remedy.Issue{{Field: "Lines[0].SKU", Code: "required"}},
		schema: itemSchema,
		args:   `{"sku":"A","quantity":1,"lines":[{}]}`,
		blocked: []rewrite.Blocked{{Path: "/lines/0/sku", Field: "Lines[0].SKU", Code: "required",
			Why: "the value is missing, and no default is known"}},
	}})
}

// TestDefaultRewriterSchemaRuleOnly: an issue that names only its rule is placed on the one
// value of the arguments that breaks the schema so, and on nothing when there are several.
func TestDefaultRewriterSchemaRuleOnly(t *testing.T) {
	runSchemaCases(t, []schemaCase{{
		name:    "oneof: the one value outside its enum",
		issues:  []remedy.Issue{{Code: "oneof", Message: "Key: 'CreateItem.Currency' Error:Field validation for 'Currency' failed on the 'oneof' tag"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"currency":"USD","color":"red"}`,
		want:    `{"sku":"A","quantity":1,"currency":"usd","color":"red"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"USD"`, `"usd"`)},
	}, {
		name:    "max: the one value over its maximum",
		issues:  []remedy.Issue{{Code: "max"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":500,"lines":[{"sku":"x","qty":3}]}`,
		want:    `{"sku":"A","quantity":100,"lines":[{"sku":"x","qty":3}]}`,
		changes: []changeView{lossy("/quantity", "clamp", `500`, `100`)},
		why:     "at most 100",
	}, {
		name:    "type: the one value of the wrong type, inside an item",
		issues:  []remedy.Issue{{Code: "type"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":"3"}]}`,
		want:    `{"sku":"A","quantity":1,"lines":[{"sku":"x","qty":3}]}`,
		changes: []changeView{lossless("/lines/0/qty", "coerce", `"3"`, `3`)},
	}, {
		name:    "required: the one missing property",
		issues:  []remedy.Issue{{Code: "required"}},
		schema:  strings.Replace(itemSchema, `"required":["sku","quantity"]`, `"required":["sku","quantity","color"]`, 1),
		args:    `{"sku":"A","quantity":1}`,
		want:    `{"sku":"A","quantity":1,"color":"red"}`,
		changes: []changeView{lossless("/color", "default", ``, `"red"`)},
	}, {
		name:    "two values break the enum: no guess",
		issues:  []remedy.Issue{{Code: "oneof"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"currency":"USD","color":"RED"}`,
		blocked: []rewrite.Blocked{{Code: "oneof", Why: "the issue names no field, and several values of the arguments break the schema as its code says"}},
	}, {
		name:    "nothing breaks the enum: no guess",
		issues:  []remedy.Issue{{Code: "oneof"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"currency":"usd"}`,
		blocked: []rewrite.Blocked{{Code: "oneof", Why: "the issue names no field, and no value of the arguments breaks the schema as its code says"}},
	}, {
		name:    "two issues of one rule, one value: no guess",
		issues:  []remedy.Issue{{Code: "oneof"}, {Code: "enum"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"currency":"USD"}`,
		blocked: []rewrite.Blocked{{Code: "oneof", Why: "the issue names no field, and another issue names the same rule"}},
	}, {
		name:    "a code that names no rule",
		issues:  []remedy.Issue{{Code: "custom_check"}},
		schema:  itemSchema,
		args:    `{"sku":"A","quantity":1,"currency":"USD"}`,
		blocked: []rewrite.Blocked{{Code: "custom_check", Why: "the issue names no field, and its code names no rule the schema can be checked for"}},
	}, {
		name:    "without a schema",
		issues:  []remedy.Issue{{Code: "oneof"}},
		args:    `{"currency":"USD"}`,
		blocked: []rewrite.Blocked{{Code: "oneof", Why: "the issue names no field"}},
	}})
}

// TestDefaultRewriterSchemaHostile: schemas and fields built to make the mapping loop, fan out
// or run long are followed only so far, and never panic.
func TestDefaultRewriterSchemaHostile(t *testing.T) {
	t.Parallel()
	deep := func(n int, leaf string) string {
		return strings.Repeat(`{"type":"object","properties":{"a":`, n) + leaf + strings.Repeat(`}}`, n)
	}
	var wide strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := range 5000 {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"p_%d":{"$ref":"#"},"P-%d":{"$ref":"#"}`, i, i)
	}
	wide.WriteString(`}}`)
	// Every element's schema is the root's, of 10000 properties: each visit reads it whole.
	var big strings.Builder
	big.WriteString(`{"type":"object","required":["zz"],"properties":{"l":{"type":"array","items":{"$ref":"#"}}`)
	for i := range 10000 {
		fmt.Fprintf(&big, `,"p_%d":{"type":"integer","maximum":3}`, i)
	}
	big.WriteString(`}}`)
	manyEmpty := `{"l":[` + strings.Repeat(`{},`, 50000) + `{}]}`
	manyFields := make([]remedy.Issue, 256)
	for i := range manyFields {
		manyFields[i] = remedy.Issue{Field: fmt.Sprintf("P%d", 9999-i), Code: "max"}
	}
	deepArgs := strings.Repeat(`{"a":`, 30) + `"1"` + strings.Repeat(`}`, 30)
	longField := strings.Repeat("A.", 10000) + "b"
	longPath := strings.Repeat("/a", 10000)
	bigArray := `{"lines":[` + strings.Repeat(`{"qty":"1"},`, 20000) + `{"qty":"1"}]}`
	for name, tc := range map[string]struct {
		schema, args string
		issues       []remedy.Issue
		why          string // the first blocked issue's Why; "" when the arguments are repaired
	}{
		"a $ref to itself": {`{"$ref":"#","type":"object","properties":{"x":{"$ref":"#"}}}`, `{"x":{"x":"RED"}}`,
			[]remedy.Issue{{Field: "X.X.X.X", Code: "enum"}, {Code: "oneof"}, {Path: "/X/x", Code: "type"}},
			"the issue names no field, and no value of the arguments breaks the schema as its code says"},
		"items that are themselves": {`{"$defs":{"L":{"type":"array","items":{"$ref":"#/$defs/L"}}},"type":"object","properties":{"l":{"$ref":"#/$defs/L"}}}`,
			`{"l":[[[[[[["x"]]]]]]]}`, []remedy.Issue{{Field: "l.q", Code: "type"}}, "the field names no property of the schema"},
		"a deep schema": {deep(30, `{"type":"integer"}`), deepArgs,
			[]remedy.Issue{{Field: strings.Repeat("A.", 29) + "A", Code: "type"}, {Code: "type"}}, ""},
		"a schema deeper than JSON": {deep(200, `{"type":"integer"}`), `{"a":"1"}`, []remedy.Issue{{Field: "A", Code: "type"}},
			"the field is not a path into the arguments, and no readable schema maps it onto one"},
		"10000 properties referring back": {wide.String(), `{"p_1":{"p_2":"x"}}`,
			[]remedy.Issue{{Field: "P1.P2.P3", Code: "type"}, {Code: "required"}, {Path: "/p1/p2", Code: "enum"}},
			"the field matches several properties of the schema"},
		"a field of 10000 segments": {itemSchema, `{"sku":"A"}`, []remedy.Issue{{Field: longField, Code: "type"}}, "the field cannot be read as a path"},
		"a path of 10000 segments": {itemSchema, `{"sku":"A"}`, []remedy.Issue{{Path: longPath, Code: "type"}},
			"the field, the schema or the arguments are too large to map within bounds"},
		"20001 elements, none alone": {itemSchema, bigArray, []remedy.Issue{{Field: "lines.qty", Code: "type"}, {Code: "type"}},
			"the field leaves out an array index, and several elements could be the one"},
		"20001 elements, one issue without a field": {itemSchema, bigArray, []remedy.Issue{{Code: "type"}},
			"the field, the schema or the arguments are too large to map within bounds"},
		"50001 elements of a large schema, no field": {big.String(), manyEmpty, []remedy.Issue{{Code: "type"}},
			"the field, the schema or the arguments are too large to map within bounds"},
		"50001 elements of a large schema, no index": {big.String(), manyEmpty, []remedy.Issue{{Field: "l.zz", Code: "required"}},
			"the field, the schema or the arguments are too large to map within bounds"},
		"256 fields in a large schema": {big.String(), `{"p_1":"x"}`, manyFields, "the field, the schema or the arguments are too large to map within bounds"},
	} {
		t.Run(name, func(t *testing.T) {
			r := &rewrite.Request{Args: json.RawMessage(tc.args), Schema: json.RawMessage(tc.schema),
				Envelope: &remedy.Envelope{Issues: tc.issues}}
			out, err := rewrite.Default.Rewrite(context.Background(), r)
			require.NoError(t, err)
			if err := checkChanges([]byte(tc.args), out, r.Changes); err != nil {
				t.Error(err)
			}
			if tc.why == "" {
				assert.NotNil(t, out, "blocked: %+v", r.Blocked)
				return
			}
			assert.Nil(t, out)
			require.NotEmpty(t, r.Blocked, "a give-up says why")
			assert.Equal(t, tc.why, r.Blocked[0].Why)
		})
	}
}

// TestDefaultRewriterBlocked: every way Default gives up says why, and a repair clears
// what an earlier give-up left.
func TestDefaultRewriterBlocked(t *testing.T) {
	t.Parallel()
	many := make([]remedy.Issue, 257)
	for i := range many {
		many[i] = remedy.Issue{Path: "/a", Code: "enum"}
	}
	for name, tc := range map[string]struct {
		r   *rewrite.Request
		why string
	}{
		"no envelope":     {&rewrite.Request{Args: json.RawMessage(`{}`)}, "the failure names no field to repair"},
		"no issues":       {&rewrite.Request{Args: json.RawMessage(`{}`), Envelope: &remedy.Envelope{}}, "the failure names no field to repair"},
		"too many issues": {&rewrite.Request{Args: json.RawMessage(`{}`), Envelope: &remedy.Envelope{Issues: many}}, "the failure lists more issues than a repair is tried for"},
		"not an object": {&rewrite.Request{Args: json.RawMessage(`[1]`), Envelope: &remedy.Envelope{Issues: []remedy.Issue{{Path: "/a", SuggestedValue: json.RawMessage(`1`)}}}},
			"the arguments are not one JSON object with each key once"},
		"a count of issues left out": {&rewrite.Request{Args: json.RawMessage(`{}`), Envelope: &remedy.Envelope{Issues: []remedy.Issue{{Code: "too_many_issues"}}}},
			"the repair leaves the arguments as they were"},
	} {
		out, err := rewrite.Default.Rewrite(context.Background(), tc.r)
		require.NoError(t, err, name)
		assert.Nil(t, out, name)
		assert.Equal(t, []rewrite.Blocked{{Why: tc.why}}, tc.r.Blocked, name)
	}

	r := &rewrite.Request{Args: json.RawMessage(`{"a":"x"}`), Blocked: []rewrite.Blocked{{Why: "stale"}},
		Envelope: &remedy.Envelope{Issues: []remedy.Issue{{Path: "/a", SuggestedValue: json.RawMessage(`"y"`)}}}}
	out, err := rewrite.Default.Rewrite(context.Background(), r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":"y"}`, string(out))
	assert.Nil(t, r.Blocked, "a repair is blocked by nothing")
}

// TestChainKeepsTheFirstBlocked: when every rewriter gives up, the chain's account is the
// first one given: Default's facts, not a model's silence.
func TestChainKeepsTheFirstBlocked(t *testing.T) {
	t.Parallel()
	silent := rewrite.Func(func(context.Context, *rewrite.Request) (json.RawMessage, error) { return nil, nil })
	other := rewrite.Func(func(_ context.Context, r *rewrite.Request) (json.RawMessage, error) {
		r.Blocked = []rewrite.Blocked{{Why: "the other's"}}
		return nil, nil
	})
	e := &remedy.Envelope{Issues: []remedy.Issue{{Path: "/color", Code: "enum"}}}
	r := &rewrite.Request{Args: json.RawMessage(`{"color":"RED"}`), Envelope: e}
	out, err := rewrite.Chain(silent, rewrite.Default, other).Rewrite(context.Background(), r)
	require.NoError(t, err)
	assert.Nil(t, out)
	assert.Equal(t, []rewrite.Blocked{{Path: "/color", Code: "enum", Why: "no allowed value or type is known"}}, r.Blocked)

	// With the schema, the default rewriter repairs, and the chain says nothing blocked it.
	r = &rewrite.Request{Args: json.RawMessage(`{"color":"RED"}`), Envelope: e, Schema: json.RawMessage(itemSchema)}
	out, err = rewrite.Chain(other, rewrite.Default).Rewrite(context.Background(), r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"color":"red"}`, string(out))
	assert.Nil(t, r.Blocked)

	// A proposal kept while the rest are tried is returned without an account of a give-up.
	e = &remedy.Envelope{Issues: []remedy.Issue{{Path: "/quantity", Code: "max"}}}
	r = &rewrite.Request{Args: json.RawMessage(`{"sku":"A","quantity":500}`), Envelope: e, Schema: json.RawMessage(itemSchema)}
	out, err = rewrite.Chain(rewrite.Default, other).Rewrite(context.Background(), r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sku":"A","quantity":100}`, string(out))
	assert.Nil(t, r.Blocked)
	assert.True(t, r.Changes[0].Lossy)
}

// TestLoopRewritesFromTheSchema: the loop gives the call's Schema to the rewriter, so that gin's
// bare "failed on the 'oneof' tag" is repaired; without it, the call's error says which issue
// blocked the rewriter, and why.
func TestLoopRewritesFromTheSchema(t *testing.T) {
	t.Parallel()
	gin, ok := remedy.Parse(400, http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		[]byte(`{"error":"Key: 'CreateItem.Currency' Error:Field validation for 'Currency' failed on the 'oneof' tag"}`))
	require.True(t, ok)
	var sent []string
	tool := client.TransportFunc(func(_ context.Context, req *client.Request) (*client.Response, error) {
		sent = append(sent, string(req.Args))
		if strings.Contains(string(req.Args), `"usd"`) {
			return &client.Response{Status: 201, Body: []byte(`{"id":"it_1"}`)}, nil
		}
		return &client.Response{Status: 400, Envelope: gin}, nil
	})
	loop := client.Loop{Transport: tool, Rewriter: rewrite.Default, Check: client.CheckOff}
	call := client.Call{Operation: "create_item", Args: json.RawMessage(`{"sku":"A","quantity":1,"currency":"USD"}`)}

	_, err := loop.Do(context.Background(), call)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, client.ErrRewriteGaveUp)
	want := []rewrite.Blocked{{Field: "Currency", Code: "oneof", Why: "the field is not a path into the arguments, and no readable schema maps it onto one"}}
	assert.Equal(t, want, ce.Blocked)
	assert.Contains(t, err.Error(), "; not repaired: Currency (oneof): the field is not a path into the arguments, and no readable schema maps it onto one (after 1 attempt)")

	sent = nil
	call.Schema = json.RawMessage(itemSchema)
	resp, err := loop.Do(context.Background(), call)
	require.NoError(t, err)
	assert.Equal(t, 201, resp.Status)
	assert.Equal(t, []string{`{"sku":"A","quantity":1,"currency":"USD"}`, `{"sku":"A","quantity":1,"currency":"usd"}`}, sent)
	assert.Equal(t, []changeView{lossless("/currency", "enum_match", `"USD"`, `"usd"`)}, viewChanges(resp.Attempts[0].Changes))
}

// TestCallErrorNamesBlocked: the message names the first few blocked issues, each cut short,
// then how many more there are.
func TestCallErrorNamesBlocked(t *testing.T) {
	t.Parallel()
	e := &client.CallError{Operation: "create_item", Cause: client.ErrRewriteGaveUp, Detail: "no rewriter could address every issue"}
	e.Blocked = []rewrite.Blocked{
		{Path: "/color", Code: "enum", Why: "no allowed value or type is known"},
		{Field: "Lines[1].SKU", Code: "required", Why: "the field names no property of the schema"},
		{Code: "oneof", Why: "the issue names no field"},
		{Path: "/note", Why: "no rule repairs the value with what is known"},
		{Why: "the failure names no field to repair"},
		{Path: "/" + strings.Repeat("x", 5000), Code: "enum", Why: "x"},
		{Path: "/b", Code: "enum", Why: "x"},
	}
	assert.Equal(t, "remedy: create_item: "+client.ErrRewriteGaveUp.Error()+": no rewriter could address every issue; not repaired: "+
		"/color (enum): no allowed value or type is known; Lines[1].SKU (required): the field names no property of the schema; "+
		"(oneof): the issue names no field; /note: no rule repairs the value with what is known; the failure names no field to repair; "+
		"and 2 more (after 0 attempts)", e.Error())

	e.Blocked = []rewrite.Blocked{{Path: "/" + strings.Repeat("é", 5000), Code: strings.Repeat("c", 5000), Why: strings.Repeat("w", 5000)}}
	msg := e.Error()
	assert.Less(t, len(msg), 500, "a message of a few lines, whatever the server wrote")
	assert.True(t, utf8.ValidString(msg), "cut at a character boundary")
}

// itemsOpenAPI is an OpenAPI 3.0 document as code generators write it: the body's schema and
// its lines behind components $refs, a nullable integer, a query parameter with a maximum.
const itemsOpenAPI = `{"openapi":"3.0.3","info":{"title":"items","version":"1"},
"paths":{"/items":{"post":{"operationId":"create_item",
	"parameters":[{"name":"limit","in":"query","schema":{"type":"integer","maximum":100}}],
	"requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/CreateItem"}}}},
	"responses":{"201":{"description":"created"}}}}},
"components":{"schemas":{
	"CreateItem":{"type":"object","required":["sku"],"properties":{
		"sku":{"type":"string"},
		"quantity":{"type":"integer","nullable":true,"minimum":1},
		"currency":{"$ref":"#/components/schemas/Currency"},
		"lines":{"type":"array","items":{"$ref":"#/components/schemas/Line"}}}},
	"Currency":{"type":"string","enum":["usd","eur"]},
	"Line":{"type":"object","properties":{"unit_price":{"type":"number"},"qty":{"type":"integer","exclusiveMaximum":true,"maximum":10}}}}}}`

// TestDefaultRewriterOpenAPISchema: an operation's Parameters read from OpenAPI (parameters
// and request body in one object, components inlined, 3.0's nullable and boolean
// exclusiveMaximum) is a schema Default reads.
func TestDefaultRewriterOpenAPISchema(t *testing.T) {
	ops, err := client.OperationsFromOpenAPI([]byte(itemsOpenAPI))
	require.NoError(t, err)
	require.Len(t, ops, 1)
	schema := string(ops[0].Parameters)
	runSchemaCases(t, []schemaCase{{
		name:    "a query parameter's maximum",
		issues:  []remedy.Issue{{Field: "Limit", Code: "max"}},
		schema:  schema,
		args:    `{"sku":"A","limit":500}`,
		want:    `{"sku":"A","limit":100}`,
		changes: []changeView{lossy("/limit", "clamp", `500`, `100`)},
		why:     "the schema allows at most 100",
	}, {
		name:    "an enum behind a components $ref",
		issues:  []remedy.Issue{{Field: "Currency", Code: "oneof"}},
		schema:  schema,
		args:    `{"sku":"A","currency":"EUR"}`,
		want:    `{"sku":"A","currency":"eur"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"EUR"`, `"eur"`)},
	}, {
		name:    "a nullable integer",
		issues:  []remedy.Issue{{Path: "/quantity", Code: "type"}},
		schema:  schema,
		args:    `{"sku":"A","quantity":"5"}`,
		want:    `{"sku":"A","quantity":5}`,
		changes: []changeView{lossless("/quantity", "coerce", `"5"`, `5`)},
	}, {
		name:    "a line's snake_case member named in Go",
		issues:  []remedy.Issue{{Field: "Lines[0].UnitPrice", Code: "type"}},
		schema:  schema,
		args:    `{"sku":"A","lines":[{"unit_price":"2.5"}]}`,
		want:    `{"sku":"A","lines":[{"unit_price":2.5}]}`,
		changes: []changeView{lossless("/lines/0/unit_price", "coerce", `"2.5"`, `2.5`)},
	}, {
		name:    "a boolean exclusiveMaximum beside maximum",
		issues:  []remedy.Issue{{Field: "lines.qty", Code: "lt"}},
		schema:  schema,
		args:    `{"sku":"A","lines":[{"qty":3},{"qty":10}]}`,
		want:    `{"sku":"A","lines":[{"qty":3},{"qty":9}]}`,
		changes: []changeView{lossy("/lines/1/qty", "clamp", `10`, `9`)},
		why:     "at most 9",
	}})
}

// corpusItemSchema is the arguments schema of the API the frameworks of the corpus serve.
const corpusItemSchema = `{"type":"object","required":["sku","quantity","currency"],"properties":{
	"sku":{"type":"string","minLength":1},
	"quantity":{"type":"integer","minimum":1,"maximum":100},
	"currency":{"type":"string","enum":["usd","eur"]},
	"limit":{"type":"integer","maximum":100},
	"lines":{"type":"array","items":{"type":"object","required":["sku","quantity"],
		"properties":{"sku":{"type":"string"},"quantity":{"type":"integer","minimum":1}}}}}}`

// TestDefaultRewriterFrameworkFailuresWithSchema: the frameworks' failures recorded in the
// corpus, which name a Go field, a path without its index, or only a rule, are repaired once
// the operation's schema is known, or say what blocked them.
func TestDefaultRewriterFrameworkFailuresWithSchema(t *testing.T) {
	t.Parallel()
	samples := map[string]struct {
		status int
		header http.Header
		body   []byte
	}{}
	for _, s := range loadCorpus(t) {
		samples[s.Dialect+"/"+s.Name] = struct {
			status int
			header http.Header
			body   []byte
		}{s.Status, s.Header, s.Body}
	}
	lines := `"lines":[{"sku":"a","quantity":1},{"sku":"b","quantity":"2"}]`
	for _, tc := range []struct {
		sample, args, want string
		changes            []changeView
		blocked            []rewrite.Blocked
	}{
		{sample: "generic_json/gin-enum", args: `{"sku":"A","quantity":1,"currency":"USD"}`, want: `{"sku":"A","quantity":1,"currency":"usd"}`,
			changes: []changeView{lossless("/currency", "enum_match", `"USD"`, `"usd"`)}},
		{sample: "unstructured/fiber-enum", args: `{"sku":"A","quantity":1,"currency":"Eur"}`, want: `{"sku":"A","quantity":1,"currency":"eur"}`,
			changes: []changeView{lossless("/currency", "enum_match", `"Eur"`, `"eur"`)}},
		{sample: "generic_json/fiber-docs-enum", args: `{"sku":"A","quantity":1,"currency":"EUR"}`, want: `{"sku":"A","quantity":1,"currency":"eur"}`,
			changes: []changeView{lossless("/currency", "enum_match", `"EUR"`, `"eur"`)}},
		{sample: "generic_json/gin-nested-type", args: `{"sku":"A","quantity":1,"currency":"usd",` + lines + `}`,
			want:    `{"sku":"A","quantity":1,"currency":"usd","lines":[{"sku":"a","quantity":1},{"sku":"b","quantity":2}]}`,
			changes: []changeView{lossless("/lines/1/quantity", "coerce", `"2"`, `2`)}},
		{sample: "generic_json/echo-binder-nested-type", args: `{"sku":"A","quantity":1,"currency":"usd",` + lines + `}`,
			want:    `{"sku":"A","quantity":1,"currency":"usd","lines":[{"sku":"a","quantity":1},{"sku":"b","quantity":2}]}`,
			changes: []changeView{lossless("/lines/1/quantity", "coerce", `"2"`, `2`)}},
		{sample: "generic_json/echo-maximum", args: `{"sku":"A","quantity":500,"currency":"usd"}`, want: `{"sku":"A","quantity":100,"currency":"usd"}`,
			changes: []changeView{lossy("/quantity", "clamp", `500`, `100`)}},
		{sample: "generic_json/gin-query-maximum", args: `{"limit":500}`, want: `{"limit":100}`,
			changes: []changeView{lossy("/limit", "clamp", `500`, `100`)}},
		{sample: "generic_json/gin-nested-required", args: `{"sku":"A","quantity":1,"currency":"usd","lines":[{"sku":"a","quantity":1},{"quantity":2}]}`,
			blocked: []rewrite.Blocked{{Path: "/lines/1/sku", Field: "Lines[1].SKU", Code: "required", Why: "the value is missing, and no default is known"}}},
		// fiber's own docs print the value, not the field's place: "[SKU]: ''" is an empty
		// string, which is no missing property, so the rule names no one value.
		{sample: "generic_json/fiber-docs-several", args: `{"sku":"","quantity":500,"currency":"gbp"}`,
			blocked: []rewrite.Blocked{{Code: "required", Why: "the issue names no field, and no value of the arguments breaks the schema as its code says"}}},
	} {
		s, ok := samples[tc.sample]
		require.True(t, ok, tc.sample)
		e, ok := remedy.Parse(s.status, s.header, s.body)
		require.True(t, ok, tc.sample)
		r := &rewrite.Request{Operation: "create_item", Args: json.RawMessage(tc.args), Envelope: e, Attempt: 1, Schema: json.RawMessage(corpusItemSchema)}
		out, err := rewrite.Default.Rewrite(context.Background(), r)
		require.NoError(t, err)
		if tc.want == "" {
			assert.Nil(t, out, tc.sample)
			assert.Equal(t, tc.blocked, r.Blocked, tc.sample)
			continue
		}
		if assert.NotNil(t, out, "%s: %+v %+v", tc.sample, e.Issues, r.Blocked) {
			assert.JSONEq(t, tc.want, string(out), tc.sample)
			assert.Equal(t, tc.changes, viewChanges(r.Changes), tc.sample)
		}
	}
}
