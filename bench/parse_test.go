package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

// quote is what the floor counts: bytes.Count(body, quote) reads every byte of the body once
// and decides nothing, so no reader of the body can be faster.
var quote = []byte{'"'}

// BenchmarkParse reads every dialect of remedy's corpus with remedy.Parse, beside three
// baselines on the same bodies, none of which finds anything out (no status, headers or
// dialect):
//
//   - goccy: github.com/goccy/go-json's Valid, a fast validating scan of the JSON: what it
//     costs to look at every byte with a JSON grammar in mind, allocating nothing;
//   - floor: bytes.Count of the quotes, which touches every byte once: the memory floor;
//   - encoding-json: encoding/json decoding into map[string]any, the usual way to read an
//     error body. Unstructured bodies (HTML, plain text) fail it at once, as they would;
//   - goccy-decode: goccy/go-json's Unmarshal into map[string]any, the same job done by the
//     fastest decoder: what it costs to keep anything of a body at all.
//
// b.Loop keeps the baselines' calls from being optimized away although their results are
// dropped.
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
			report := measureCPU(b)
			for i := 0; b.Loop(); i++ {
				s := &samples[i%len(samples)]
				if _, ok := remedy.Parse(s.Status, s.Header, s.Body); !ok {
					b.Fatal("not a failure")
				}
			}
			report()
		})
		b.Run(d+"/goccy", func(b *testing.B) {
			b.ReportAllocs()
			report := measureCPU(b)
			for i := 0; b.Loop(); i++ {
				gojson.Valid(samples[i%len(samples)].Body)
			}
			report()
		})
		b.Run(d+"/floor", func(b *testing.B) {
			b.ReportAllocs()
			report := measureCPU(b)
			for i := 0; b.Loop(); i++ {
				bytes.Count(samples[i%len(samples)].Body, quote)
			}
			report()
		})
		b.Run(d+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			report := measureCPU(b)
			for i := 0; b.Loop(); i++ {
				var m map[string]any
				_ = json.Unmarshal(samples[i%len(samples)].Body, &m)
			}
			report()
		})
		b.Run(d+"/goccy-decode", func(b *testing.B) {
			b.ReportAllocs()
			report := measureCPU(b)
			for i := 0; b.Loop(); i++ {
				var m map[string]any
				_ = gojson.Unmarshal(samples[i%len(samples)].Body, &m)
			}
			report()
		})
	}
}

// agentBody is the ~1 KB agent envelope of the README's goal: the bytes remedy's own
// BenchmarkAgentEnvelope measures.
var agentBody = corpus.AgentEnvelope

// largeBodySize is the most bytes largeAgentBody may hold: about 1 MB, under remedy's
// DefaultMaxBody (1 MiB), so that Parse reads all of it rather than its prefix.
const largeBodySize = 1_000_000

// largeAgentBody is the agent envelope of agentBody's shape with as many issues as fit in
// largeBodySize: the same three kinds of issue in turn (a required field, an enum, a
// maximum), each on an item of its own.
var largeAgentBody = buildAgentEnvelope(largeBodySize)

// buildAgentEnvelope writes an agent envelope of agentBody's members, with issues added until
// one more would take it past size bytes. The same size gives the same bytes.
func buildAgentEnvelope(size int) []byte {
	const tail = `],
"schema":{"type":"object","required":["customer_id","currency"],"properties":{"currency":{"type":"string","enum":["usd","eur","gbp"]}}},
"retryable":true,"hint":"Fix the listed fields and send the request again; nothing was created.","severity":"error","category":"validation",
"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","docs_url":"https://docs.example.com/errors/invalid_body"}}`
	head := func(n int) string {
		return fmt.Sprintf(`{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation: %d issues.",
"issues":[`, n)
	}
	issue := func(i int) string {
		switch i % 3 {
		case 0:
			return fmt.Sprintf(`{"path":["items",%d,"customer_id"],"pointer":"/items/%d/customer_id","code":"required","message":"customer_id is required","expected":{"type":"string","pattern":"^cus_[A-Za-z0-9]{14}$"}}`, i, i)
		case 1:
			return fmt.Sprintf(`{"path":["items",%d,"currency"],"pointer":"/items/%d/currency","code":"enum","message":"currency must be one of usd, eur, gbp","received":"USD$","allowed_values":["usd","eur","gbp"],"suggested_value":"usd"}`, i, i)
		}
		return fmt.Sprintf(`{"path":["items",%d,"quantity"],"pointer":"/items/%d/quantity","code":"maximum","message":"quantity must be at most 100","expected":{"maximum":100},"received":250,"suggested_value":100}`, i, i)
	}
	var issues []string
	n := len(head(0)) + len(tail)
	for i := 0; ; i++ {
		next := len(issue(i)) + 2 // a comma and a newline before all but the first; the head's count grows by a digit at most
		if n+next+len(fmt.Sprint(i+1)) > size {
			break
		}
		issues = append(issues, issue(i))
		n += next
	}
	return []byte(head(len(issues)) + strings.Join(issues, ",\n") + tail)
}

// BenchmarkAgentEnvelope is the README's headline case: the 1 KB agent envelope parsed in
// full and classified only (the retry decision, no envelope kept), beside the baselines of
// BenchmarkParse (goccy-decode decoding into agentShape: the fields Parse keeps); and the
// ~1 MB envelope parsed in full beside the two baselines that allocate nothing and
// goccy-decode, so that the time per byte at each size tells whether Parse stays linear in
// the body (b.SetBytes: go test prints MB/s). Each loop is written out, not passed as a
// function, so that no contender pays an indirect call the others do not.
func BenchmarkAgentEnvelope(b *testing.B) {
	for _, size := range []struct {
		name string
		body []byte
	}{{"1KB", agentBody}, {"1MB", largeAgentBody}} {
		body := size.body
		b.Run(size.name+"/remedy", func(b *testing.B) {
			defer sized(b, body)()
			for b.Loop() {
				remedy.Parse(422, nil, body)
			}
		})
		if size.name == "1KB" {
			b.Run(size.name+"/classify", func(b *testing.B) {
				defer sized(b, body)()
				for b.Loop() {
					remedy.Classify(422, nil, body)
				}
			})
		}
		b.Run(size.name+"/goccy", func(b *testing.B) {
			defer sized(b, body)()
			for b.Loop() {
				gojson.Valid(body)
			}
		})
		b.Run(size.name+"/floor", func(b *testing.B) {
			defer sized(b, body)()
			for b.Loop() {
				bytes.Count(body, quote)
			}
		})
		if size.name == "1KB" {
			b.Run(size.name+"/encoding-json", func(b *testing.B) {
				defer sized(b, body)()
				for b.Loop() {
					var m map[string]any
					_ = json.Unmarshal(body, &m)
				}
			})
		}
		b.Run(size.name+"/goccy-decode", func(b *testing.B) {
			defer sized(b, body)()
			for b.Loop() {
				var e agentShape
				_ = gojson.Unmarshal(body, &e)
			}
		})
	}
}

// agentShape is what Parse returns of the agent envelope, as a struct goccy/go-json decodes
// into: the decision fields, the texts, and each issue's location, code, message and raw
// values. Decoding into it is the least any reader that keeps those fields does, with the
// fastest decoder in Go and none of Parse's other work (no dialect to find, no duplicate
// keys or invalid UTF-8 refused, no pointers built, no retry decided).
type agentShape struct {
	Error struct {
		StatusCode int               `json:"statusCode"`
		Code       string            `json:"code"`
		Message    string            `json:"message"`
		Issues     []agentShapeIssue `json:"issues"`
		Schema     json.RawMessage   `json:"schema"`
		Retryable  bool              `json:"retryable"`
		Hint       string            `json:"hint"`
		Severity   string            `json:"severity"`
		Category   string            `json:"category"`
		TraceID    string            `json:"trace_id"`
		DocsURL    string            `json:"docs_url"`
	} `json:"error"`
}

type agentShapeIssue struct {
	Path      []json.RawMessage `json:"path"`
	Pointer   string            `json:"pointer"`
	Code      string            `json:"code"`
	Message   string            `json:"message"`
	Expected  json.RawMessage   `json:"expected"`
	Received  json.RawMessage   `json:"received"`
	Allowed   []json.RawMessage `json:"allowed_values"`
	Suggested json.RawMessage   `json:"suggested_value"`
}

// sized sets a benchmark of body up (allocations reported, its length as the bytes per
// operation) and starts measureCPU; defer what it returns, which reports the CPU time.
func sized(b *testing.B, body []byte) func() {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	return measureCPU(b)
}
