package remedy_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/corpus"
)

// BenchmarkParse measures Parse on every dialect of the corpus, each beside a baseline that
// decodes the same bodies with encoding/json into map[string]any (which finds nothing out: it
// is the cost of merely reading the body the usual way). Run with -benchmem; compare the
// Parse/<dialect> and Baseline/<dialect> rows.
func BenchmarkParse(b *testing.B) {
	all, err := corpus.Load(filepath.Join("testdata", "envelopes"))
	if err != nil {
		b.Fatal(err)
	}
	order, byDialect := corpus.ByDialect(all)
	for _, d := range order {
		samples := byDialect[d]
		b.Run("Parse/"+d, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s := &samples[i%len(samples)]
				if _, ok := remedy.Parse(s.Status, s.Header, s.Body); !ok {
					b.Fatal("not a failure")
				}
			}
		})
		b.Run("Baseline/"+d, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s := &samples[i%len(samples)]
				var m map[string]any
				_ = json.Unmarshal(s.Body, &m) // unstructured bodies fail here, as they would
			}
		})
	}
}

// agentBody is the ~1 KB agent envelope of the README's goal.
var agentBody = corpus.AgentEnvelope

var problemBody = []byte(`{"type":"https://api.example.com/problems/rate-limited","title":"Too many requests","status":429,
"detail":"You have sent 612 requests in the last 60 seconds; the limit is 600.","instance":"/v2/orders",
"is_retriable":true,"retry_after_ms":15000,"suggestions":["Wait 15 seconds, then retry unchanged.","Batch order lookups with GET /v2/orders?ids=..."],
"trace_id":"0af7651916cd43dd8448eb211c80319c","doc_uri":"https://api.example.com/docs/rate-limits"}`)

// BenchmarkAgentEnvelope is the headline case: a ~1 KB agent envelope, fully parsed, and
// classified only, beside encoding/json decoding it into a map.
func BenchmarkAgentEnvelope(b *testing.B) {
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(agentBody)))
		for b.Loop() {
			remedy.Parse(422, nil, agentBody)
		}
	})
	b.Run("Classify", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(agentBody)))
		for b.Loop() {
			remedy.Classify(422, nil, agentBody)
		}
	})
	b.Run("Baseline", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(agentBody)))
		for b.Loop() {
			var m map[string]any
			_ = json.Unmarshal(agentBody, &m)
		}
	})
}

// BenchmarkClassify is the hot path of a retry loop: the decision alone, for the agent envelope
// and RFC 9457.
func BenchmarkClassify(b *testing.B) {
	for _, c := range []struct {
		name   string
		status int
		body   []byte
	}{{"agent", 422, agentBody}, {"rfc9457", 429, problemBody}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				remedy.Classify(c.status, nil, c.body)
			}
		})
	}
}

// TestClassifyAllocatesNothing holds the classification path to zero allocations for the agent
// envelope and RFC 9457 (allocation counts are exact, unlike timings).
func TestClassifyAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not the program's under the race detector (sync.Pool drops items); run without -race")
	}
	for name, c := range map[string]struct {
		status int
		body   []byte
	}{"agent": {422, agentBody}, "rfc9457": {429, problemBody}} {
		allocs := testing.AllocsPerRun(50, func() { remedy.Classify(c.status, nil, c.body) })
		if allocs != 0 {
			t.Errorf("%s: Classify allocated %.0f times per call, want 0", name, allocs)
		}
	}
}
