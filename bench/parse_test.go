package bench

import (
	"encoding/json"
	"testing"

	"github.com/remedy-go/remedy"
)

// BenchmarkParse reads every dialect of remedy's corpus with remedy.Parse, beside
// encoding/json decoding the same bodies into map[string]any: the usual way to read an error
// body, which finds nothing out (no status, headers or dialect), so it is the floor a reader
// of the body pays, not an equivalent. Unstructured bodies (HTML, plain text) fail
// encoding/json at once, as they would.
func BenchmarkParse(b *testing.B) {
	byDialect := map[string][]sample{}
	var order []string
	for _, s := range loadCorpus(b) {
		if _, ok := byDialect[s.dialect]; !ok {
			order = append(order, s.dialect)
		}
		byDialect[s.dialect] = append(byDialect[s.dialect], s)
	}
	for _, d := range order {
		samples := byDialect[d]
		b.Run(d+"/remedy", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s := &samples[i%len(samples)]
				if _, ok := remedy.Parse(s.status, s.header, s.body); !ok {
					b.Fatal("not a failure")
				}
			}
		})
		b.Run(d+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s := &samples[i%len(samples)]
				var m map[string]any
				_ = json.Unmarshal(s.body, &m)
			}
		})
	}
}

// agentBody is the ~1 KB agent envelope of the README's goal (three issues, the schema, the
// decision fields): the same bytes as remedy's own BenchmarkAgentEnvelope.
var agentBody = []byte(`{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation: 3 issues.",
"issues":[{"path":["customer_id"],"pointer":"/customer_id","code":"required","message":"customer_id is required","expected":{"type":"string","pattern":"^cus_[A-Za-z0-9]{14}$"}},
{"path":["currency"],"pointer":"/currency","code":"enum","message":"currency must be one of usd, eur, gbp","received":"USD$","allowed_values":["usd","eur","gbp"],"suggested_value":"usd"},
{"path":["items",2,"quantity"],"pointer":"/items/2/quantity","code":"maximum","message":"quantity must be at most 100","expected":{"maximum":100},"received":250,"suggested_value":100}],
"schema":{"type":"object","required":["customer_id","currency"],"properties":{"currency":{"type":"string","enum":["usd","eur","gbp"]}}},
"retryable":true,"hint":"Fix the listed fields and send the request again; nothing was created.","severity":"error","category":"validation",
"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","docs_url":"https://docs.example.com/errors/invalid_body"}}`)

// BenchmarkAgentEnvelope is the README's headline case: the 1 KB agent envelope, parsed in
// full and classified only (the retry decision, no envelope kept), beside encoding/json.
func BenchmarkAgentEnvelope(b *testing.B) {
	b.Run("1KB/remedy", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(agentBody)))
		for b.Loop() {
			remedy.Parse(422, nil, agentBody)
		}
	})
	b.Run("1KB/classify", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(agentBody)))
		for b.Loop() {
			remedy.Classify(422, nil, agentBody)
		}
	})
	b.Run("1KB/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(agentBody)))
		for b.Loop() {
			var m map[string]any
			_ = json.Unmarshal(agentBody, &m)
		}
	})
}
