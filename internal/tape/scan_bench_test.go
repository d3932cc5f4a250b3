package tape

import (
	"encoding/json"
	"testing"
)

// scanBody is the agent envelope of BenchmarkAgentEnvelope.
var scanBody = `{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation: 3 issues.",
"issues":[{"path":["customer_id"],"pointer":"/customer_id","code":"required","message":"customer_id is required","expected":{"type":"string","pattern":"^cus_[A-Za-z0-9]{14}$"}},
{"path":["currency"],"pointer":"/currency","code":"enum","message":"currency must be one of usd, eur, gbp","received":"USD$","allowed_values":["usd","eur","gbp"],"suggested_value":"usd"},
{"path":["items",2,"quantity"],"pointer":"/items/2/quantity","code":"maximum","message":"quantity must be at most 100","expected":{"maximum":100},"received":250,"suggested_value":100}],
"schema":{"type":"object","required":["customer_id","currency"],"properties":{"currency":{"type":"string","enum":["usd","eur","gbp"]}}},
"retryable":true,"hint":"Fix the listed fields and send the request again; nothing was created.","severity":"error","category":"validation",
"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","docs_url":"https://docs.example.com/errors/invalid_body"}}`

// BenchmarkScan measures the JSON reader alone (validation and the tape) on the ~1 KB agent
// envelope, beside encoding/json's Valid, which validates without indexing anything.
func BenchmarkScan(b *testing.B) {
	b.SetBytes(int64(len(scanBody)))
	t := Get()
	for b.Loop() {
		t.Parse(scanBody)
	}
}
func BenchmarkJSONValid(b *testing.B) {
	bb := []byte(scanBody)
	b.SetBytes(int64(len(scanBody)))
	for b.Loop() {
		json.Valid(bb)
	}
}
