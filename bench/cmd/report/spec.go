package main

// Group is one table of BENCHMARKS.md: the benchmarks named Bench/<case>/<contender>, where
// each subject is compared with each baseline of the same case.
type Group struct {
	Bench     string
	Title     string
	Short     string // the chart's name for the group
	About     string // what is measured, in markdown
	Subjects  []string
	Baselines []string
	// Wide lays the table out one row per case and subject, each baseline's time in a column
	// of its own, and a column of ratios per baseline with their median over the cases.
	Wide bool
	// Chart lists the baselines whose ratios the chart draws (every baseline when empty).
	Chart []string
	// Metrics are custom units shown as columns where reported, beside time, B/op and
	// allocs/op.
	Metrics []Metric
	Names   map[string]string // contender → what the table calls it, over contenderNames
}

// Metric is a custom unit a table shows.
type Metric struct {
	Unit, Header string
}

var contenderNames = map[string]string{
	"remedy":        "remedy",
	"classify":      "remedy.Classify",
	"goccy":         "goccy Valid",
	"floor":         "bytes.Count",
	"encoding-json": "encoding/json",
	"goccy-decode":  "goccy Unmarshal",
	"net-http":      "net/http",
	"retryablehttp": "go-retryablehttp",
	"failsafe":      "failsafe-go",
	"huma":          "huma",
	"go-sdk":        "bare go-sdk",
	"nokey":         "no key",
	"first":         "first execution",
	"replay":        "replay",
}

// floors are baselines that do less than any reader of a failure could, by design: a
// validating scan and a byte count. remedy is slower than them by construction, so they are
// not "peers" it is slower than; the goals say by how much it may be.
var floors = map[string]bool{"goccy": true, "floor": true}

// name is what g calls contender c.
func (g *Group) name(c string) string {
	if n, ok := g.Names[c]; ok {
		return n
	}
	if n, ok := contenderNames[c]; ok {
		return n
	}
	return c
}

var groups = []*Group{
	{
		Bench: "BenchmarkParse", Title: "Envelope parsing over the corpus", Short: "Parse",
		About: "`remedy.Parse(status, header, body)` on every response of the corpus " +
			"(`testdata/envelopes/<dialect>/*.http`, cycling through the dialect's files), beside four " +
			"baselines on the same bodies, none of which learns anything from them (no status, no " +
			"headers, no dialect): goccy/go-json's `Valid`, a fast validating scan that allocates " +
			"nothing (the floor for anything that reads JSON, and the yardstick of the goals); " +
			"`bytes.Count` of the quotes, which touches each byte once (the memory floor); and " +
			"`encoding/json` decoding into `map[string]any`, the usual way to read an error body; and " +
			"goccy/go-json's `Unmarshal` doing the same, the fastest decoder in Go: what keeping anything " +
			"of a body costs at least. Unstructured bodies (HTML, plain text) fail the JSON baselines at " +
			"their first byte, which is why those rows favour the baselines most. Times are wall times; each ratio is given " +
			"by wall time and by CPU time.",
		Subjects: []string{"remedy"}, Baselines: []string{"goccy", "floor", "encoding-json", "goccy-decode"},
		Wide: true, Chart: []string{"goccy"},
	},
	{
		Bench: "BenchmarkAgentEnvelope", Title: "The agent envelope, 1 KB and 1 MB", Short: "Agent envelope",
		About: "The README's headline case: a ~1 KB agent envelope (three issues, the schema, the " +
			"decision fields) parsed in full by `Parse`, classified only by `Classify` (the retry " +
			"decision, nothing kept), beside the baselines of the table above; here goccy's `Unmarshal` " +
			"decodes into a struct of the fields `Parse` keeps (the decision fields, the texts, each " +
			"issue's pointer, code, message and raw values), the least any reader keeping them does. " +
			"`1MB` is the same envelope with as many issues as fit in 1 000 000 bytes (under " +
			"`DefaultMaxBody`, so it is parsed, not truncated), beside the baselines but encoding/json: " +
			"the time per byte at the two sizes shows whether `Parse` stays linear in the body.",
		Subjects: []string{"remedy", "classify"}, Baselines: []string{"goccy", "floor", "encoding-json", "goccy-decode"},
		Chart: []string{"goccy", "encoding-json"},
		Names: map[string]string{"remedy": "remedy.Parse"},
	},
	{
		Bench: "BenchmarkClient", Title: "Client: one successful call", Short: "Client",
		About: "A POST with a JSON body answered 200 by a loopback `httptest` server, the body read: " +
			"remedy's `Client.Call` of a registered operation, a plain `net/http` client, " +
			"go-retryablehttp's `Client.Do` and an `http.Client` over failsafe-go's " +
			"`failsafehttp.NewRoundTripper` with its retry policy. All share one `http.Transport` and put " +
			"the same bytes on the wire (Content-Type, Accept, an Idempotency-Key: remedy mints a fresh " +
			"one per call, the others send a fixed one, so minting is counted against remedy only).",
		Subjects: []string{"remedy"}, Baselines: []string{"net-http", "retryablehttp", "failsafe"},
	},
	{
		Bench: "BenchmarkRetry", Title: "Client: 503, then 200", Short: "Retry",
		About: "The same call against a server that answers every first attempt 503 (a problem " +
			"document saying nothing about retrying, no Retry-After) and the retry 200, with every wait " +
			"forced to zero: remedy with a zero backoff (and a retry budget refunding a token per success, " +
			"which calls that each retry once never drain), go-retryablehttp with RetryWaitMin and " +
			"RetryWaitMax 0, failsafe-go's HTTP retry policy with delay 0 (and a listener closing the " +
			"retried response, which failsafe-go leaves open). What is measured is two round trips and " +
			"each library's decision between them.",
		Subjects: []string{"remedy"}, Baselines: []string{"retryablehttp", "failsafe"},
	},
	{
		Bench: "BenchmarkServer", Title: "Server: a validated POST", Short: "Server",
		About: "One operation — an order with a pattern, an email format, an enum, bounds on an array " +
			"of items, lengths and minimums — served by remedy's reference server (`server.Post`, " +
			"constraints in the `schema` tag), by a bare `net/http` handler (ServeMux, `encoding/json` " +
			"refusing unknown fields, the same constraints checked by hand, a 422 listing them) and by " +
			"huma v2 (`humago` on a ServeMux, `huma.DefaultConfig`, the same constraints in huma's tags). " +
			"Measured through `handler.ServeHTTP` with an `httptest.ResponseRecorder`, no network. A test " +
			"(`TestServersAgree`) holds the three to the same answers on valid input and on each " +
			"violation. `valid` is answered 200; `invalid` breaks three constraints and is answered 422 " +
			"with each violation (remedy's envelope also carries each violated subschema, a hint and a " +
			"JSON Pointer per issue).",
		Subjects: []string{"remedy"}, Baselines: []string{"net-http", "huma"},
	},
	{
		Bench: "BenchmarkMCP", Title: "Server: a tool call over MCP", Short: "MCP",
		About: "The operation of the table above called as an MCP tool: `tools/call` over streamable " +
			"HTTP on loopback, through one go-sdk client session, on remedy's reference server (the " +
			"operation's tool at `/mcp`: the same JSON Schema validation as the REST route, its " +
			"envelope for a failure) and on a bare go-sdk server with the same tool (`mcp.AddTool` with " +
			"the input struct, the same constraints checked by hand, no output schema, as remedy's tool " +
			"has none), each with sessions and answers as event streams. A test (`TestMCPServersAgree`) holds the two to the same result for the valid " +
			"order and a tool error for the invalid one. Each time includes the client's side of the call.",
		Subjects: []string{"remedy"}, Baselines: []string{"go-sdk"},
	},
	{
		Bench: "BenchmarkIdempotency", Title: "Server: idempotent requests", Short: "Idempotency",
		About: "The valid order of the table above on an operation registered with `server.Idempotent()`, " +
			"through `ServeHTTP`: without an Idempotency-Key (no store touched: the baseline), a first " +
			"execution (a new key each time: claim, run, store the response) and a replay (one key: the " +
			"stored response is answered with `Idempotency-Replayed: true` and nothing runs), with the " +
			"memory store and with `redisstore` on a throwaway local `redis-server` (one round trip per " +
			"claim and per completion, counted by a go-redis hook). The Redis rows' CPU time is this " +
			"process's only: redis-server's is not counted.",
		Subjects: []string{"first", "replay"}, Baselines: []string{"nokey"},
		Metrics: []Metric{{roundTripsUnit, "Redis round trips"}},
	},
}
