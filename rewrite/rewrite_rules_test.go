package rewrite_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/rewrite"
)

// chargeSchema is the input schema of AgentBack's charge tool, as its envelope inlines it.
const chargeSchema = `{"type":"object","properties":{"amount":{"type":"integer","minimum":50,"maximum":1000000},` +
	`"currency":{"type":"string","enum":["eur","usd"]}},"required":["amount","currency"]}`

// agentBackBody is AgentBack's failure for one zod issue: the issue names no allowed values
// and no bounds; the enum and the range are only in the schema.
func agentBackBody(path, code, message string) string {
	return `{"error":{"code":"invalid_input","message":` + string(quote("Invalid input for tool charge: "+path+": "+message)) + `,` +
		`"issues":[{"path":["` + path + `"],"code":"` + code + `","message":` + string(quote(message)) + `}],` +
		`"schema":` + chargeSchema + `,"retryable":true,"hint":"Fix the listed issues, then call the tool again."}}`
}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// overMCP wraps a failure as an MCP tool result, the way it reaches an agent over MCP.
func overMCP(body string) string {
	return `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":` + string(quote(body)) + `}],"isError":true}}`
}

func TestDefaultRewriterReadsTheSchema(t *testing.T) {
	invalidOption := agentBackBody("currency", "invalid_value", `Invalid option: expected one of "eur"|"usd"`)
	runRewriteCases(t, []rewriteCase{{
		name:   "AgentBack's failure as it sends it",
		status: 400,
		body: `{"error":{"code":"invalid_input","message":"Invalid input for tool charge: currency: Invalid option",` +
			`"issues":[{"path":["currency"],"code":"invalid_value","message":"Invalid option: expected one of \"eur\"|\"usd\""}],` +
			`"schema":{"type":"object","properties":{"amount":{"type":"integer","minimum":50,"maximum":1000000},` +
			`"currency":{"type":"string","enum":["eur","usd"]}},"required":["amount","currency"]},` +
			`"retryable":true,"hint":"Fix the listed issues..."}}`,
		args:    `{"amount":1200,"currency":"EUR"}`,
		want:    `{"amount":1200,"currency":"eur"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"EUR"`, `"eur"`)},
	}, {
		name:    "AgentBack: the enum only in the schema, the case fixed",
		status:  400,
		body:    invalidOption,
		args:    `{"amount":1200,"currency":"EUR"}`,
		want:    `{"amount":1200,"currency":"eur"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"EUR"`, `"eur"`)},
	}, {
		name:    "AgentBack over MCP",
		status:  200,
		body:    overMCP(invalidOption),
		args:    `{"amount":1200,"currency":"EUR"}`,
		want:    `{"amount":1200,"currency":"eur"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"EUR"`, `"eur"`)},
	}, {
		name:    "surrounding space",
		status:  400,
		body:    invalidOption,
		args:    `{"amount":1200,"currency":" usd "}`,
		want:    `{"amount":1200,"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "enum_match", `" usd "`, `"usd"`)},
	}, {
		name:    "AgentBack: a currency outside the enum is a choice, proposed",
		status:  400,
		body:    invalidOption,
		args:    `{"amount":1200,"currency":"GBP"}`,
		want:    `{"amount":1200,"currency":"eur"}`,
		changes: []changeView{lossy("/currency", "choose_allowed", `"GBP"`, `"eur"`)},
	}, {
		name:    "AgentBack: an amount over the maximum is clamped, proposed",
		status:  400,
		body:    agentBackBody("amount", "too_big", "Too big: expected number to be <=1000000"),
		args:    `{"amount":99999999,"currency":"eur"}`,
		want:    `{"amount":1000000,"currency":"eur"}`,
		changes: []changeView{lossy("/amount", "clamp", `99999999`, `1000000`)},
	}, {
		name:    "AgentBack: an amount under the minimum is clamped, proposed",
		status:  400,
		body:    agentBackBody("amount", "too_small", "Too small: expected number to be >=50"),
		args:    `{"amount":10,"currency":"eur"}`,
		want:    `{"amount":50,"currency":"eur"}`,
		changes: []changeView{lossy("/amount", "clamp", `10`, `50`)},
	}, {
		name:    "AgentBack: an amount sent as a string is coerced",
		status:  400,
		body:    agentBackBody("amount", "invalid_type", "Invalid input: expected number, received string"),
		args:    `{"amount":"1200","currency":"eur"}`,
		want:    `{"amount":1200,"currency":"eur"}`,
		changes: []changeView{lossless("/amount", "coerce", `"1200"`, `1200`)},
	}, {
		name:   "AgentBack: a string that is no integer is not coerced",
		status: 400,
		body:   agentBackBody("amount", "invalid_type", "Invalid input: expected number, received string"),
		args:   `{"amount":"12.5","currency":"eur"}`,
	}, {
		name:   "two allowed values match regardless of case: no enum_match",
		status: 400,
		body: `{"error":{"code":"invalid_input","issues":[{"path":["currency"],"code":"invalid_value","message":"Invalid option"}],
			"schema":{"type":"object","properties":{"currency":{"enum":["eur","EUR"]}}}}}`,
		args:    `{"currency":"Eur"}`,
		want:    `{"currency":"eur"}`,
		changes: []changeView{lossy("/currency", "choose_allowed", `"Eur"`, `"eur"`)},
	}, {
		name:   "a value the enum allows: the enum is not what is wrong",
		status: 400,
		body:   invalidOption,
		args:   `{"amount":1200,"currency":"eur"}`,
	}, {
		name:   "the choice is the schema's default when it is allowed",
		status: 400,
		body: `{"error":{"code":"invalid_input","issues":[{"path":["currency"],"code":"invalid_value"}],
			"schema":{"type":"object","properties":{"currency":{"enum":["eur","usd","gbp"],"default":"usd"}}}}}`,
		args:    `{"currency":"yen"}`,
		want:    `{"currency":"usd"}`,
		changes: []changeView{lossy("/currency", "choose_allowed", `"yen"`, `"usd"`)},
	}, {
		name:   "a missing value gets no choice",
		status: 400,
		body: `{"error":{"code":"invalid_input","issues":[{"path":["currency"],"code":"required"}],
			"schema":{"type":"object","properties":{"currency":{"enum":["eur","usd"]}}}}}`,
		args: `{"amount":1}`,
	}, {
		name:   "a const is the only allowed value",
		status: 400,
		body: `{"error":{"code":"invalid_input","issues":[{"path":["version"],"code":"invalid_literal"}],
			"schema":{"type":"object","properties":{"version":{"const":"v2"}}}}}`,
		args:    `{"version":"v1"}`,
		want:    `{"version":"v2"}`,
		changes: []changeView{lossless("/version", "only_allowed_value", `"v1"`, `"v2"`)},
	}, {
		name:   "an enum behind a local $ref (pydantic $defs)",
		status: 422,
		body: `{"error":{"code":"invalid_body","issues":[{"path":["order","currency"],"code":"enum"}],
			"schema":{"$defs":{"Currency":{"enum":["eur","usd"],"type":"string"},
			"Order":{"type":"object","properties":{"currency":{"$ref":"#/$defs/Currency"}}}},
			"type":"object","properties":{"order":{"$ref":"#/$defs/Order"}}}}}`,
		args:    `{"order":{"currency":"USD"}}`,
		want:    `{"order":{"currency":"usd"}}`,
		changes: []changeView{lossless("/order/currency", "enum_match", `"USD"`, `"usd"`)},
	}, {
		name:   "a nullable enum: the branch that is not null",
		status: 422,
		body: `{"error":{"code":"invalid_body","issues":[{"path":["sort"],"code":"enum"}],
			"schema":{"type":"object","properties":{"sort":{"anyOf":[{"type":"string","enum":["asc","desc"]},{"type":"null"}]}}}}}`,
		args:    `{"sort":"DESC"}`,
		want:    `{"sort":"desc"}`,
		changes: []changeView{lossless("/sort", "enum_match", `"DESC"`, `"desc"`)},
	}, {
		name:   "a union of consts allows their values",
		status: 422,
		body: `{"error":{"code":"invalid_body","issues":[{"path":["unit"],"code":"invalid_union"}],
			"schema":{"type":"object","properties":{"unit":{"oneOf":[{"const":"kg"},{"const":"lb"}]}}}}}`,
		args:    `{"unit":"KG"}`,
		want:    `{"unit":"kg"}`,
		changes: []changeView{lossless("/unit", "enum_match", `"KG"`, `"kg"`)},
	}, {
		name:   "a union of several kinds of value says nothing: no type to coerce to",
		status: 422,
		body: `{"error":{"code":"invalid_body","issues":[{"path":["limit"],"code":"invalid_union"}],
			"schema":{"type":"object","properties":{"limit":{"anyOf":[{"type":"integer","maximum":10},{"type":"string","maxLength":2}]}}}}}`,
		args: `{"limit":"500"}`,
	}, {
		name:   "a path the schema declares but does not lead to the field has no schema, not a namesake's",
		status: 422,
		body: `{"error":{"code":"invalid_body","issues":[{"path":["payment","amount"],"code":"too_big"}],
			"schema":{"type":"object","properties":{"amount":{"type":"integer","maximum":10},
			"payment":{"anyOf":[{"type":"object","properties":{"card":{"type":"string"}}},{"type":"object","properties":{"iban":{"type":"string"}}}]}}}}}`,
		args: `{"amount":5,"payment":{"amount":50}}`,
	}, {
		name:    "allowed values of one type name the type: a coercion onto one of them",
		status:  400,
		body:    `{"error":{"code":"invalid_quantity","message":"quantity must be 1, 2 or 5","field":"quantity","allowed_values":[1,2,5]}}`,
		args:    `{"quantity":"2"}`,
		want:    `{"quantity":2}`,
		changes: []changeView{lossless("/quantity", "coerce", `"2"`, `2`)},
	}, {
		name:   "a value absent from the arguments is missing, whatever the code",
		status: 400,
		body: `{"error":{"code":"invalid_input","issues":[{"path":["options","page_size"],"code":"invalid_type",
			"message":"Invalid input: expected number, received undefined"}],
			"schema":{"type":"object","properties":{"options":{"type":"object","properties":{"page_size":{"type":"integer","default":20}}}}}}}`,
		args:    `{"query":"x"}`,
		want:    `{"query":"x","options":{"page_size":20}}`,
		changes: []changeView{lossless("/options/page_size", "default", ``, `20`)},
	}})
}

func TestDefaultRewriterMergesIssuesAtOnePath(t *testing.T) {
	// The agent error spec states the field and its suggestion at the top level; the same
	// failure also lists the zod issue, which has no value. Parse gives both as issues.
	split := `{"error":{"code":"invalid_currency","message":"Currency 'US$' is not supported","field":"currency",
		"suggested_value":"usd","issues":[{"path":["currency"],"code":"invalid_value","message":"Invalid option"}]}}`
	e, ok := remedy.Parse(400, nil, []byte(split))
	require.True(t, ok)
	require.Len(t, e.Issues, 2)
	require.Equal(t, e.Issues[0].Path, e.Issues[1].Path)
	require.Empty(t, e.Issues[0].SuggestedValue, "the first issue has no value: repaired alone, it would give up")

	runRewriteCases(t, []rewriteCase{{
		name:    "an issue without a value and the top-level field's suggestion",
		status:  400,
		body:    split,
		args:    `{"amount":2500,"currency":"US$"}`,
		want:    `{"amount":2500,"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "suggested_value", `"US$"`, `"usd"`)},
	}, {
		name:   "the allowed values from one issue, the complaint from another",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[
			{"path":["currency"],"code":"invalid_value","message":"Invalid option"},
			{"path":["currency"],"code":"enum","allowed_values":["eur","usd"]}]}}`,
		args:    `{"currency":"EUR"}`,
		want:    `{"currency":"eur"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"EUR"`, `"eur"`)},
	}, {
		name:   "the bound from one issue, the type from another",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[
			{"path":["n"],"code":"type","expected":"integer"},
			{"path":["n"],"code":"maximum","expected":{"maximum":9}}]}}`,
		args:    `{"n":12}`,
		want:    `{"n":9}`,
		changes: []changeView{lossy("/n", "clamp", `12`, `9`)},
	}, {
		name:   "a member's issue listed first, inside an object a later issue replaces",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[
			{"path":["shipping","country"],"code":"enum","allowed_values":["FR"]},
			{"path":["shipping"],"code":"invalid_type","suggested_value":{"country":"FR","city":"Paris"}}]}}`,
		args:    `{"shipping":"Paris"}`,
		want:    `{"shipping":{"country":"FR","city":"Paris"}}`,
		changes: []changeView{lossless("/shipping", "suggested_value", `"Paris"`, `{"country":"FR","city":"Paris"}`)},
	}, {
		name:   "a member dropped with the object that names it",
		status: 400,
		body: `{"error":{"statusCode":400,"code":"invalid_body","issues":[
			{"path":["shipping","zip"],"code":"unrecognized_keys"},
			{"path":["shipping"],"code":"unrecognized_keys","message":"Unrecognized key(s) in object: 'zip'"}]}}`,
		args:    `{"shipping":{"postal_code":"75001","zip":"75001"}}`,
		want:    `{"shipping":{"postal_code":"75001"}}`,
		changes: []changeView{lossy("/shipping/zip", "drop_unknown", `"75001"`, ``)},
	}})
}

func TestDefaultRewriterPrefersLosslessRules(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "a suggested value beats an example",
		status: 400,
		body: `{"error":{"code":"invalid_customer","field":"customer","suggested_value":"cus_A",
			"example_request":{"method":"POST","body":{"customer":"cus_B"}}}}`,
		args:    `{"customer":"Ada"}`,
		want:    `{"customer":"cus_A"}`,
		changes: []changeView{lossless("/customer", "suggested_value", `"Ada"`, `"cus_A"`)},
	}, {
		name:    "the only allowed value beats an example",
		status:  400,
		body:    `{"error":{"code":"invalid_currency","field":"currency","allowed_values":["usd"],"example_request":{"currency":"eur"}}}`,
		args:    `{"currency":"US$"}`,
		want:    `{"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "only_allowed_value", `"US$"`, `"usd"`)},
	}, {
		name:   "an enum value in the wrong case is an enum_match, never a choice",
		status: 400,
		body: `{"type":"about:blank","title":"Bad Request","status":400,"invalid_fields":[{"field":"sort",
			"reason":"must be asc or desc","valid_values":["asc","desc"]}]}`,
		args:    `{"sort":"DESC"}`,
		want:    `{"sort":"desc"}`,
		changes: []changeView{lossless("/sort", "enum_match", `"DESC"`, `"desc"`)},
	}, {
		name:   "a default beats an example",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["limit"],"code":"required"}],
			"schema":{"type":"object","properties":{"limit":{"type":"integer","default":50}}},"example_request":{"limit":20}}}`,
		args:    `{}`,
		want:    `{"limit":50}`,
		changes: []changeView{lossless("/limit", "default", ``, `50`)},
	}, {
		name:   "an example among the allowed values beats the first of them",
		status: 400,
		body: `{"error":{"code":"invalid_sort","field":"sort","allowed_values":["asc","desc"],
			"example_request":{"sort":"desc"}}}`,
		args:    `{"sort":"newest"}`,
		want:    `{"sort":"desc"}`,
		changes: []changeView{lossy("/sort", "example", `"newest"`, `"desc"`)},
	}, {
		name:   "an example outside the allowed values is no repair",
		status: 400,
		body: `{"error":{"code":"invalid_sort","field":"sort","allowed_values":["asc","desc"],
			"example_request":{"sort":"created_at"}}}`,
		args:    `{"sort":"newest"}`,
		want:    `{"sort":"asc"}`,
		changes: []changeView{lossy("/sort", "choose_allowed", `"newest"`, `"asc"`)},
	}, {
		name:   "lossless and lossy repairs together: every change listed, each marked",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[
			{"path":["quantity"],"code":"invalid_type","expected":"integer"},
			{"path":["note"],"code":"too_long","expected":{"maxLength":4}},
			{"path":["currency"],"code":"enum","allowed_values":["usd","eur"]}]}}`,
		args: `{"quantity":"3","note":"gift wrap","currency":"Usd"}`,
		want: `{"quantity":3,"note":"gift","currency":"usd"}`,
		changes: []changeView{
			lossless("/quantity", "coerce", `"3"`, `3`),
			lossy("/note", "truncate", `"gift wrap"`, `"gift"`),
			lossless("/currency", "enum_match", `"Usd"`, `"usd"`),
		},
	}})
}

// The same rules whatever dialect the failure is written in.
func TestDefaultRewriterDialects(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "agent error spec: top-level field and allowed_values",
		status: 400,
		body: `{"error":{"code":"invalid_currency","message":"Currency 'USD' is not supported.","field":"currency",
			"allowed_values":["usd","eur","gbp"],"retryable":true,"category":"validation"}}`,
		args:    `{"amount":2500,"currency":"USD"}`,
		want:    `{"amount":2500,"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "enum_match", `"USD"`, `"usd"`)},
	}, {
		name:   "RFC 9457 invalid_fields: several valid values and none matches",
		status: 400,
		body: `{"type":"about:blank","title":"Bad Request","status":400,"invalid_fields":[{"field":"sort",
			"reason":"must be asc or desc","valid_values":["asc","desc"]}]}`,
		args:    `{"sort":"ascending"}`,
		want:    `{"sort":"asc"}`,
		changes: []changeView{lossy("/sort", "choose_allowed", `"ascending"`, `"asc"`)},
	}, {
		name:   "RFC 9457 invalid_fields: expected range",
		status: 400,
		body: `{"type":"https://api.example.com/problems/invalid-request-body","title":"Request body failed validation",
			"status":400,"invalid_fields":[{"field":"page_size","reason":"must be at most 100",
			"expected":{"type":"integer","maximum":100},"received":500}]}`,
		args:    `{"page_size":500}`,
		want:    `{"page_size":100}`,
		changes: []changeView{lossy("/page_size", "clamp", `500`, `100`)},
	}, {
		name:   "Stripe param: an unknown parameter dropped",
		status: 400,
		body: `{"error":{"type":"invalid_request_error","code":"parameter_unknown","param":"metadata_source",
			"message":"Received unknown parameter: metadata_source","doc_url":"https://stripe.com/docs/error-codes/parameter-unknown"}}`,
		args:    `{"amount":100,"metadata_source":"agent"}`,
		want:    `{"amount":100}`,
		changes: []changeView{lossy("/metadata_source", "drop_unknown", `"agent"`, ``)},
	}, {
		name:   "Google BadRequest fieldViolations: no value to aim at, no guess",
		status: 400,
		body: `{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT",
			"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[
			{"field":"page_size","description":"must be at most 1000"}]}]}}`,
		args: `{"page_size":5000}`,
	}, {
		name:   "Google BadRequest fieldViolations with the schema inlined by another layer: no schema, no guess",
		status: 400,
		body: `{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT",
			"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[
			{"field":"filter.state","description":"unknown state"}]}]}}`,
		args: `{"filter":{"state":"ACTIVE"}}`,
	}})
}

func TestDefaultRewriterWhy(t *testing.T) {
	split := `{"error":{"code":"invalid_currency","message":"Currency 'US$' is not supported","field":"currency",
		"suggested_value":"usd","issues":[{"path":["currency"],"code":"invalid_value","message":"Invalid option"},
		{"path":["currency"],"code":"enum"}]}}`
	_, r := rewriteOnce(t, 400, split, `{"currency":"US$"}`)
	require.Len(t, r.Changes, 1)
	assert.Equal(t, "Invalid option; enum; Currency 'US$' is not supported", r.Changes[0].Why,
		"every issue at the path, in the order of the issues, its code when it has no message")
}

func TestDefaultRewriterChangesOnlyWhenItRepairs(t *testing.T) {
	e, ok := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_sort","field":"sort","message":"bad sort"}}`))
	require.True(t, ok)
	stale := []rewrite.Change{{Path: "/sort", Rule: "rewriter"}}
	r := &rewrite.Request{Args: json.RawMessage(`{"sort":"up"}`), Envelope: e, Changes: stale}
	out, err := rewrite.Default.Rewrite(context.Background(), r)
	require.NoError(t, err)
	assert.Nil(t, out)
	assert.Nil(t, r.Changes, "a give-up leaves no changes behind, whatever the Rewrite held")

	r = &rewrite.Request{Args: json.RawMessage(`{"sort":"up"}`), Envelope: e, Changes: stale}
	e.Issues[0].AllowedValues = []json.RawMessage{json.RawMessage(`"asc"`)}
	out, err = rewrite.Default.Rewrite(context.Background(), r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sort":"asc"}`, string(out))
	assert.Equal(t, []changeView{lossless("/sort", "only_allowed_value", `"up"`, `"asc"`)}, viewChanges(r.Changes),
		"the changes describe this repair only")
}

// A schema that refers to itself, or fans out at every level, is followed only so far.
func TestDefaultRewriterSchemaBounded(t *testing.T) {
	var fan strings.Builder
	fan.WriteString(`{"type":"object","properties":{"x":`)
	for range 12 {
		fan.WriteString(`{"allOf":[`)
	}
	fan.WriteString(`{"maximum":3}`)
	for range 12 {
		fan.WriteString(`,{"$ref":"#"}]}`)
	}
	fan.WriteString(`}}`)
	for name, schema := range map[string]string{
		"a $ref to itself":    `{"$ref":"#","type":"object","properties":{"x":{"$ref":"#/properties/x","maximum":3}}}`,
		"allOf fanning out":   fan.String(),
		"a $ref nowhere":      `{"type":"object","properties":{"x":{"$ref":"#/$defs/Missing"}}}`,
		"a $ref elsewhere":    `{"type":"object","properties":{"x":{"$ref":"https://example.com/x.json"}}}`,
		"a $ref into a value": `{"type":"object","properties":{"x":{"$ref":"#/properties/x/maximum/0"}}}`,
	} {
		require.True(t, json.Valid([]byte(schema)), name)
		body := `{"error":{"code":"invalid_body","issues":[{"path":["x"],"code":"too_big"}],"schema":` + schema + `}}`
		out, r := rewriteOnce(t, 422, body, `{"x":5}`)
		if err := checkChanges([]byte(`{"x":5}`), out, r.Changes); err != nil {
			t.Error(name, err)
		}
	}
}
