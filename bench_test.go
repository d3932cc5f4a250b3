package remedy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
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

// bigAgentBody is an agent envelope of about size bytes: the 1 KB one's shape with as many
// issues as fit.
func bigAgentBody(size int) []byte {
	const issue = `{"path":["items",%d,"quantity"],"pointer":"/items/%d/quantity","code":"maximum","message":"quantity must be at most 100","expected":{"maximum":100},"received":250,"allowed_values":[1,10,100],"suggested_value":100}`
	b := []byte(`{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation.","retryable":false,"issues":[`)
	for i := 0; len(b) < size-300; i++ {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = fmt.Appendf(b, issue, i, i)
	}
	return append(b, `],"schema":{"type":"object","required":["items"]},"hint":"Fix the listed fields.","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}}`...)
}

// BenchmarkParseSize reads agent envelopes of 1 KB and 1 MB (under the 1 MiB bound): the cost
// per byte (MB/s) should not fall, nor the allocations grow, with the size of the body.
func BenchmarkParseSize(b *testing.B) {
	for _, c := range []struct {
		name string
		size int
	}{{"1KB", 1 << 10}, {"1MB", 1000 << 10}} {
		body := bigAgentBody(c.size)
		if e, ok := remedy.Parse(422, nil, body); !ok || e.Dialect != remedy.DialectAgent || len(e.Issues) == 0 {
			b.Fatalf("%s: not read as an agent envelope with issues", c.name)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				remedy.Parse(422, nil, body)
			}
		})
	}
}

// TestParseAllocationsIndependentOfSize holds Parse's allocation count for a 1 MB body of
// thousands of issues to that of the 1 KB envelope (the large body's kept strings and values
// are copied out in one block, where the small one is copied whole in one): a count that grows
// with the issues fails, however fast the machine is.
func TestParseAllocationsIndependentOfSize(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not the program's under the race detector (sync.Pool drops items); run without -race")
	}
	// The collector is off while counting: a collection empties the pool of tapes, and the
	// tape a large body then takes anew would count against Parse what is the collector's.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	small := bigAgentBody(1 << 10)
	base := testing.AllocsPerRun(20, func() { remedy.Parse(422, nil, small) })
	for _, size := range []int{20 << 10, 100 << 10, 1000 << 10} {
		large := bigAgentBody(size)
		e, ok := remedy.Parse(422, nil, large)
		if !ok || len(e.Issues) < size/1000 {
			t.Fatalf("the %d-byte body was not read whole: %d issues", size, len(e.Issues))
		}
		big := testing.AllocsPerRun(5, func() { remedy.Parse(422, nil, large) })
		if big > base+0.5 {
			t.Errorf("Parse allocates %.1f times for a %d-byte body, %.0f for 1 KB: the count grows with the body", big, size, base)
		}
	}
}

// BenchmarkParseLongEventStream reads an 8 MiB event stream of progress notifications whose
// answer, a JSON-RPC error, comes last (issue 35, row 10): Parse scans the whole stream for it.
// The baseline is a reader of such a stream written with the standard library: bufio.Scanner
// over its lines and json.Valid on each event's data.
func BenchmarkParseLongEventStream(b *testing.B) {
	const progress = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":0.5}}\n\n"
	body := []byte(strings.Repeat(progress, (8<<20)/len(progress)) +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,\"message\":\"the charge failed\"}}\n\n")
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	if e, ok := remedy.Parse(200, sse, body); !ok || e.Code != "-32603" {
		b.Fatalf("the stream's failure was not read: %+v", e)
	}
	b.Run("remedy.Parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			remedy.Parse(200, sse, body)
		}
	})
	b.Run("baseline=bufio+json.Valid", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(body))
			for sc.Scan() {
				if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && !json.Valid(data) {
					b.Fatal("invalid event")
				}
			}
		}
	})
}
