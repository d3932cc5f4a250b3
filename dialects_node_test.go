package remedy_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodeCase is a body of a Node validator and the facts Parse must read from it, one string per
// issue: "path code expected allowed" (see factsOf). A near miss of a template wants the
// issue without the facts the template states, or no issue at all.
type nodeCase struct {
	name, body string
	want       []string
}

// factsOf writes each issue's facts as one string.
func factsOf(e *remedy.Envelope) []string {
	var out []string
	for _, is := range e.Issues {
		allowed := make([]string, len(is.AllowedValues))
		for i, v := range is.AllowedValues {
			allowed[i] = string(v)
		}
		out = append(out, fmt.Sprintf("%s %s %s [%s]", is.Path, is.Code, is.Expected, strings.Join(allowed, " ")))
	}
	return out
}

// runNode parses each case's body at a 400, checks the facts read and that Classify decides as
// Parse does, at the 400 and at a 503 (where a failure that names fields is not retried).
func runNode(t *testing.T, dialect remedy.Dialect, header map[string]string, cases []nodeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := make(map[string][]string)
			for k, v := range header {
				h[k] = []string{v}
			}
			for _, status := range []int{400, 503} {
				e, ok := remedy.Parse(status, h, []byte(c.body))
				require.True(t, ok)
				assert.Equal(t, dialect, e.Dialect)
				if status == 400 {
					assert.Equal(t, c.want, factsOf(e))
				}
				badAgreesWithClassify(t, status, h, []byte(c.body), e)
			}
		})
	}
}

// TestFastifyAjvMessages reads fastify's validation message: "<part><instancePath> <ajv's
// message>", each of ajv's English templates (ajv/lib/vocabularies), and nothing near them.
func TestFastifyAjvMessages(t *testing.T) {
	t.Parallel()
	body := func(code, msg string) string {
		m, _ := json.Marshal(msg)
		return `{"statusCode":400,"code":"` + code + `","error":"Bad Request","message":` + string(m) + `}`
	}
	fastify := func(msg string) string { return body("FST_ERR_VALIDATION", msg) }
	runNode(t, remedy.DialectGenericJSON, nil, []nodeCase{
		{"maximum", fastify("body/quantity must be <= 100"), []string{`/quantity maximum {"maximum":100} []`}},
		{"minimum", fastify("body/quantity must be >= 1"), []string{`/quantity minimum {"minimum":1} []`}},
		{"exclusive maximum", fastify("body/a must be < 2.5"), []string{`/a exclusiveMaximum {"exclusiveMaximum":2.5} []`}},
		{"exclusive minimum", fastify("body/a must be > -1"), []string{`/a exclusiveMinimum {"exclusiveMinimum":-1} []`}},
		{"multiple of", fastify("body/a must be multiple of 5"), []string{`/a multipleOf {"multipleOf":5} []`}},
		{"required", fastify("body must have required property 'color'"), []string{`/color required  []`}},
		{"required nested, escaped", fastify("body/lines/0 must have required property 'a/b'"), []string{`/lines/0/a~1b required  []`}},
		{"max length", fastify("body/name must NOT have more than 10 characters"), []string{`/name maxLength {"maxLength":10} []`}},
		{"min length", fastify("body/name must NOT have fewer than 2 characters"), []string{`/name minLength {"minLength":2} []`}},
		{"max items", fastify("body/tags must NOT have more than 3 items"), []string{`/tags maxItems {"maxItems":3} []`}},
		{"min properties", fastify("body/meta must NOT have fewer than 1 properties"), []string{`/meta minProperties {"minProperties":1} []`}},
		{"pattern", fastify(`body/code must match pattern "^[a-z]+$"`), []string{`/code pattern {"pattern":"^[a-z]+$"} []`}},
		{"format", fastify(`body/email must match format "email"`), []string{`/email format {"format":"email"} []`}},
		{"type", fastify("body/quantity must be integer"), []string{`/quantity type "integer" []`}},
		{"enum", fastify("body/color must be equal to one of the allowed values"), []string{`/color enum  []`}},
		{"const", fastify("body/kind must be equal to constant"), []string{`/kind const  []`}},
		{"additional properties", fastify("body must NOT have additional properties"), []string{` additionalProperties  []`}},
		{"querystring", fastify("querystring/limit must be <= 50"), []string{`/limit maximum {"maximum":50} []`}},
		{"params", fastify("params/id must be integer"), []string{`/id type "integer" []`}},
		{"headers", fastify("headers/x-key must be string"), []string{`/x-key type "string" []`}},

		{"extra text", fastify("body/quantity must be <= 100."), nil},
		{"another operator", fastify("body/quantity must be =< 100"), nil},
		{"another word", fastify("body/quantity should be <= 100"), nil},
		{"not a number", fastify("body/quantity must be <= abc"), nil},
		{"double quotes", fastify(`body must have required property "color"`), nil},
		{"two required", fastify("body must have required property 'a', body must have required property 'b'"), nil},
		{"two errors", fastify("body/a must be <= 5, body/b must be integer"), nil},
		{"two types", fastify("body/q must be string,null"), nil},
		{"not a JSON type", fastify("body/q must be date"), nil},
		{"unknown part", fastify("payload/q must be integer"), nil},
		{"size of something else", fastify("body/q must NOT have more than 3 apples"), nil},
		{"enum with values", fastify("body/color must be equal to one of the allowed values: red, green"), nil},
		{"another code", body("FST_ERR_CTP_INVALID_MEDIA_TYPE", "body/quantity must be <= 100"), nil},
	})
}

// TestExpressOpenAPIValidatorErrors reads express-openapi-validator's errors as the error
// handler of its README answers them.
func TestExpressOpenAPIValidatorErrors(t *testing.T) {
	t.Parallel()
	eov := func(path, msg, code string) string {
		p, _ := json.Marshal(path)
		m, _ := json.Marshal(msg)
		return `{"message":"request` + path + " " + strings.Trim(string(m), `"`) + `","errors":[{"path":` + string(p) + `,"message":` + string(m) + `,"errorCode":"` + code + `"}]}`
	}
	runNode(t, remedy.DialectGenericJSON, nil, []nodeCase{
		{"enum", eov("/body/color", "must be equal to one of the allowed values: red, green, blue", "enum.openapi.validation"),
			[]string{`/color enum  ["red" "green" "blue"]`}},
		{"enum of numbers", eov("/body/size", "must be equal to one of the allowed values: 1, 2, 3", "enum.openapi.validation"),
			[]string{`/size enum  []`}},
		{"enum with an empty value", eov("/body/size", "must be equal to one of the allowed values: a, , b", "enum.openapi.validation"),
			[]string{`/size enum  []`}},
		{"maximum", eov("/body/lines/1/quantity", "must be <= 100", "maximum.openapi.validation"),
			[]string{`/lines/1/quantity maximum {"maximum":100} []`}},
		{"required", eov("/body/lines/0/sku", "must have required property 'sku'", "required.openapi.validation"),
			[]string{`/lines/0/sku required  []`}},
		{"query", eov("/query/limit", "must be integer", "type.openapi.validation"), []string{`/limit type "integer" []`}},
		{"header", eov("/headers/x-key", "must be string", "type.openapi.validation"), []string{`/x-key type "string" []`}},

		// Near misses keep what the members state, not what the message would.
		{"keyword differs from the message", eov("/body/q", "must be <= 100", "minimum.openapi.validation"), []string{`/q minimum  []`}},
		{"required name not at the path's end", eov("/body/a", "must have required property 'b'", "required.openapi.validation"), []string{`/a required  []`}},
		{"message with extra text", eov("/body/q", "must be <= 100!", "maximum.openapi.validation"), []string{`/q maximum  []`}},
		{"not a request part", eov("/response/q", "must be <= 100", "maximum.openapi.validation"), nil},
		{"no validation code", eov("/body/q", "must be <= 100", "maximum"), nil},
		{"route not found", `{"message":"not found","errors":[{"path":"/nope","message":"not found"}]}`, nil},
	})
}

// TestExpressValidatorErrors reads express-validator's result.array() as its README answers
// it: the field, where it travelled and the value that arrived.
func TestExpressValidatorErrors(t *testing.T) {
	t.Parallel()
	runNode(t, remedy.DialectGenericJSON, nil, []nodeCase{
		{"body", `{"errors":[{"type":"field","value":"purple","msg":"Invalid value","path":"color","location":"body"}]}`, []string{`/color   []`}},
		{"nested", `{"errors":[{"type":"field","value":101,"msg":"Invalid value","path":"lines[1].quantity","location":"body"}]}`, []string{`/lines/1/quantity   []`}},
		{"query", `{"errors":[{"type":"field","value":"500","msg":"Invalid value","path":"a.b","location":"query"}]}`, []string{`/a.b   []`}},
	})
	// Other shapes stay as they were: no field is read from them.
	for _, body := range []string{
		`{"errors":[{"type":"alternative","msg":"Invalid value","nestedErrors":[]}]}`,
		`{"errors":[{"type":"field","msg":"Invalid value","path":"color"}]}`,
		`{"errors":[{"type":"field","msg":"Invalid value","path":"color","location":"form"}]}`,
	} {
		e, ok := remedy.Parse(400, nil, []byte(body))
		require.True(t, ok)
		assert.Empty(t, e.Issues, body)
		assert.Equal(t, remedy.DialectUnstructured, e.Dialect, body)
	}
	e, ok := remedy.Parse(400, nil, []byte(`{"errors":[{"type":"field","value":"purple","msg":"Invalid value","path":"color","location":"body"}]}`))
	require.True(t, ok)
	assert.JSONEq(t, `"purple"`, string(e.Issues[0].Received))
}

// TestClassValidatorMessages reads NestJS's ValidationPipe answer: class-validator's English
// templates after the property, led by its parents' path.
func TestClassValidatorMessages(t *testing.T) {
	t.Parallel()
	nest := func(msgs ...string) string {
		m, _ := json.Marshal(msgs)
		return `{"message":` + string(m) + `,"error":"Bad Request","statusCode":400}`
	}
	runNode(t, remedy.DialectGenericJSON, nil, []nodeCase{
		{"max", nest("quantity must not be greater than 100"), []string{`/quantity max {"maximum":100} []`}},
		{"min", nest("quantity must not be less than 1"), []string{`/quantity min {"minimum":1} []`}},
		{"nested int", nest("lines.1.quantity must be an integer number"), []string{`/lines/1/quantity isInt "integer" []`}},
		{"number", nest("price must be a number conforming to the specified constraints"), []string{`/price isNumber "number" []`}},
		{"string", nest("name must be a string"), []string{`/name isString "string" []`}},
		{"defined", nest("name should not be null or undefined"), []string{`/name isDefined  []`}},
		{"min length, two decorators", nest("name must be longer than or equal to 3 characters"), []string{`/name  {"minLength":3} []`}},
		{"max items", nest("tags must contain no more than 5 elements"), []string{`/tags arrayMaxSize {"maxItems":5} []`}},
		{"values", nest("color must be one of the following values: red, green, blue"), []string{`/color   ["red" "green" "blue"]`}},
		{"values that may be numbers", nest("size must be one of the following values: 1, 2, 3"), []string{`/size   []`}},
		{"not empty, two decorators", nest("color should not be empty"), []string{`/color   []`}},
		{"two messages", nest("a must be a string", "b must be an array"), []string{`/a isString "string" []`, `/b isArray "array" []`}},

		{"extra text", nest("quantity must not be greater than 100."), []string{`   []`}},
		{"another word", nest("quantity must be not greater than 100"), []string{`   []`}},
		{"each value", nest("each value in tags must be a string"), []string{`   []`}},
		{"each value, nested", nest("lines.1.each value in tags must be a string"), []string{`   []`}},
		{"not a template", nest("Quantity is too big"), []string{`   []`}},
	})
}

// TestCelebrateJoiMessages reads celebrate's validation member: the keys as paths, and Joi's
// English templates after the label.
func TestCelebrateJoiMessages(t *testing.T) {
	t.Parallel()
	celebrate := func(source string, keys []string, msg string) string {
		k, _ := json.Marshal(keys)
		m, _ := json.Marshal(msg)
		return `{"statusCode":400,"error":"Bad Request","message":"Validation failed","validation":{"` + source + `":{"source":"` + source + `","keys":` + string(k) + `,"message":` + string(m) + `}}}`
	}
	one := func(key, msg string) string { return celebrate("body", []string{key}, msg) }
	runNode(t, remedy.DialectGenericJSON, nil, []nodeCase{
		{"max", one("quantity", `"quantity" must be less than or equal to 100`), []string{`/quantity number.max {"maximum":100} []`}},
		{"less", one("quantity", `"quantity" must be less than 100`), []string{`/quantity number.less {"exclusiveMaximum":100} []`}},
		{"greater", one("quantity", `"quantity" must be greater than 0`), []string{`/quantity number.greater {"exclusiveMinimum":0} []`}},
		{"string min", one("name", `"name" length must be at least 3 characters long`), []string{`/name string.min {"minLength":3} []`}},
		{"array min", one("tags", `"tags" must contain at least 1 items`), []string{`/tags array.min {"minItems":1} []`}},
		{"only", one("color", `"color" must be one of [red, green, blue]`), []string{`/color any.only  ["red" "green" "blue"]`}},
		{"only one", one("color", `"color" must be [red, or green]`), []string{`/color any.only  ["red, or green"]`}},
		{"only one, a number", one("n", `"n" must be [1]`), []string{`/n any.only  []`}},
		{"only numbers", one("n", `"n" must be one of [1, 2]`), []string{`/n any.only  []`}},
		{"required", one("color", `"color" is required`), []string{`/color any.required  []`}},
		{"nested integer", one("lines.1.quantity", `"lines[1].quantity" must be an integer`), []string{`/lines/1/quantity number.integer "integer" []`}},
		{"escaped key", one("a&amp;b", `"a&b" is required`), []string{`/a&b any.required  []`}},
		{"query", celebrate("query", []string{"limit"}, `"limit" must be less than or equal to 50`), []string{`/limit number.max {"maximum":50} []`}},

		{"label is not the key's", one("lines.1.quantity", `"lines.1.quantity" must be an integer`), []string{`/lines/1/quantity   []`}},
		{"single quotes", one("quantity", `'quantity' must be less than or equal to 100`), []string{`/quantity   []`}},
		{"extra text", one("quantity", `"quantity" must be less than or equal to 100 units`), []string{`/quantity   []`}},
		{"a date's limit", one("at", `"at" must be less than or equal to "2020-01-01T00:00:00.000Z"`), []string{`/at   []`}},
		{"two keys", celebrate("body", []string{"a", "b"}, `"a" is required. "b" is required`), []string{`/a   []`, `/b   []`}},
	})
}

// TestHonoZodResults reads zod's result as @hono/zod-validator's default hook answers it: zod
// 3's issues, and zod 4's as the JSON string of its message.
func TestHonoZodResults(t *testing.T) {
	t.Parallel()
	zod4 := func(issues string) string {
		m, _ := json.Marshal(issues)
		return `{"success":false,"error":{"name":"ZodError","message":` + string(m) + `}}`
	}
	runNode(t, remedy.DialectGenericJSON, nil, []nodeCase{
		{"zod 3 enum", `{"success":false,"error":{"issues":[{"received":"purple","code":"invalid_enum_value","options":["red","green"],"path":["color"],"message":"Invalid enum value. Expected 'red' | 'green', received 'purple'"}],"name":"ZodError"}}`,
			[]string{`/color invalid_enum_value  ["red" "green"]`}},
		{"zod 3 enum missing", `{"success":false,"error":{"issues":[{"expected":"'red' | 'green'","received":"undefined","code":"invalid_type","path":["color"],"message":"Required"}],"name":"ZodError"}}`,
			[]string{`/color invalid_type  []`}},
		{"zod 4 bound", zod4(`[{"origin":"number","code":"too_big","maximum":100,"inclusive":true,"path":["lines",1,"quantity"],"message":"Too big: expected number to be <=100"}]`),
			[]string{`/lines/1/quantity too_big {"maximum":100} []`}},
		{"zod 4 exclusive bound", zod4(`[{"origin":"number","code":"too_small","minimum":0,"inclusive":false,"path":["n"],"message":"Too small: expected number to be >0"}]`),
			[]string{`/n too_small {"exclusiveMinimum":0} []`}},
		{"zod 4 values", zod4(`[{"code":"invalid_value","values":["red","green"],"path":["color"],"message":"Invalid option"}]`),
			[]string{`/color invalid_value  ["red" "green"]`}},
	})
	// Not zod's result: read by the error-object readers as before.
	for _, body := range []string{
		`{"success":true,"error":{"name":"ZodError","issues":[]}}`,
		`{"success":false,"error":{"name":"Error","message":"[]"}}`,
	} {
		e, ok := remedy.Parse(400, nil, []byte(body))
		require.True(t, ok)
		assert.NotEqual(t, remedy.DialectGenericJSON, e.Dialect, body)
	}
}

// TestPrismValidation reads Prism's problem: each validation item's location as the path, its
// code, and ajv's message after Prism's prefix.
func TestPrismValidation(t *testing.T) {
	t.Parallel()
	prism := func(items ...string) string {
		return `{"type":"https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY","title":"Invalid request","status":422,"detail":"Your request is not valid.","validation":[` + strings.Join(items, ",") + `]}`
	}
	item := func(loc, code, msg string) string {
		return `{"location":` + loc + `,"severity":"Error","code":"` + code + `","message":"` + msg + `"}`
	}
	problem := map[string]string{"Content-Type": "application/problem+json"}
	runNode(t, remedy.DialectProblem, problem, []nodeCase{
		{"body", prism(item(`["body","lines","1","quantity"]`, "maximum", "Request body property lines.1.quantity must be <= 100")),
			[]string{`/lines/1/quantity maximum {"maximum":100} []`}},
		{"required", prism(item(`["body"]`, "required", "Request body must have required property 'color'")), []string{`/color required  []`}},
		{"enum", prism(item(`["body","color"]`, "enum", "Request body property color must be equal to one of the allowed values: red, green")),
			[]string{`/color enum  ["red" "green"]`}},
		{"query", prism(item(`["query","limit"]`, "maximum", "Request query parameter limit must be <= 50")), []string{`/limit maximum {"maximum":50} []`}},
		{"escaped segment", prism(item(`["body","a~1b"]`, "type", "Request body property a~1b must be integer")), []string{`/a~1b type "integer" []`}},

		{"another prefix", prism(item(`["body","quantity"]`, "maximum", "Request body property qty must be <= 100")), []string{`/quantity maximum  []`}},
		{"code differs", prism(item(`["body","quantity"]`, "minimum", "Request body property quantity must be <= 100")), []string{`/quantity minimum  []`}},
		{"response", prism(item(`["response","quantity"]`, "maximum", "Response body property quantity must be <= 100")), nil},
		{"no location", prism(`{"severity":"Error","code":"422","message":"Target is not a string"}`), nil},
	})
}
