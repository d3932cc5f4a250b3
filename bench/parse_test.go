package bench

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/corpus"
)

// BenchmarkParse reads every dialect of remedy's corpus with remedy.Parse, beside
// encoding/json decoding the same bodies into map[string]any: the usual way to read an error
// body, which finds nothing out (no status, headers or dialect), so it is the floor a reader
// of the body pays, not an equivalent. Unstructured bodies (HTML, plain text) fail
// encoding/json at once, as they would.
func BenchmarkParse(b *testing.B) {
	all, err := corpus.Load(filepath.Join("..", "testdata", "envelopes"))
	if err != nil {
		b.Fatal(err)
	}
	order, byDialect := corpus.ByDialect(all)
	for _, d := range order {
		samples := byDialect[d]
		b.Run(d+"/remedy", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s := &samples[i%len(samples)]
				if _, ok := remedy.Parse(s.Status, s.Header, s.Body); !ok {
					b.Fatal("not a failure")
				}
			}
		})
		b.Run(d+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s := &samples[i%len(samples)]
				var m map[string]any
				_ = json.Unmarshal(s.Body, &m)
			}
		})
	}
}

// agentBody is the ~1 KB agent envelope of the README's goal: the bytes remedy's own
// BenchmarkAgentEnvelope measures.
var agentBody = corpus.AgentEnvelope

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
