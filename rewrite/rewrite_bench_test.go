package rewrite_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/rewrite"
)

// BenchmarkDefaultRewriter measures one repair by Default, the envelope already parsed:
// a few issues of the kinds a validator reports together (a suggested value, a bound in the
// issue's schema, a type named in Expected), and a bound read from the envelope's inline schema.
func BenchmarkDefaultRewriter(b *testing.B) {
	cases := []struct {
		name, body, args string
		schema           string // the operation's schema, Request.Schema; "" for none
	}{{
		name: "issues",
		body: `{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation.",
			"issues":[
				{"path":["currency"],"code":"enum","allowed_values":["usd"],"received":"US$"},
				{"path":["items",0,"quantity"],"code":"maximum","expected":{"type":"integer","maximum":100},"received":250},
				{"path":["items",1,"quantity"],"code":"invalid_type","expected":"integer","received":"3"}
			]}}`,
		args: `{"currency":"US$","items":[{"sku":"ABC-1","quantity":250},{"sku":"DEF-2","quantity":"3"}]}`,
	}, {
		name: "schema",
		body: `{"error":{"statusCode":400,"code":"invalid_input","message":"amount: Too small","issues":[
			{"path":["amount"],"code":"too_small","message":"Too small: expected number to be >=50"}],
			"schema":{"type":"object","properties":{"amount":{"type":"integer","minimum":50,"maximum":1000000},
			"currency":{"type":"string","enum":["eur","usd"]}},"required":["amount","currency"]},"retryable":true}}`,
		args: `{"amount":10,"currency":"eur"}`,
	}, {
		// gin's failure names the field in Go and the rule, nothing else: the facts and the
		// path come from the operation's schema.
		name:   "operation_schema",
		body:   `{"error":"Key: 'CreateItem.Lines[1].Qty' Error:Field validation for 'Qty' failed on the 'max' tag\nKey: 'CreateItem.Currency' Error:Field validation for 'Currency' failed on the 'oneof' tag"}`,
		args:   `{"sku":"A","quantity":1,"currency":"USD","lines":[{"sku":"x","qty":1},{"sku":"y","qty":50}]}`,
		schema: itemSchema,
	}}
	for _, c := range cases {
		e, ok := remedy.Parse(422, nil, []byte(c.body))
		if !ok {
			b.Fatal("not a failure")
		}
		args := json.RawMessage(c.args)
		var schema json.RawMessage
		if c.schema != "" {
			schema = json.RawMessage(c.schema)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				out, _ := rewrite.Default.Rewrite(ctx, &rewrite.Request{Operation: "op", Args: args, Envelope: e, Attempt: 1, Schema: schema})
				if out == nil {
					b.Fatal("no repair")
				}
			}
		})
	}
}
