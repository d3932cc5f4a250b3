// Package corpus reads the envelope corpus, testdata/envelopes/<dialect>/<name>.http: recorded
// failure responses that the golden tests, the benchmarks and the bench module share.
package corpus

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Sample is one recorded response.
type Sample struct {
	Dialect string // its directory: the dialect it is written in
	Name    string // its file name without .http
	Path    string // its path without .http, where its golden files go
	Status  int
	Header  http.Header
	Body    []byte
}

// MustLoad is Load that ends the test on an error: the recorded answers a test of another
// package reads (dir is testdata/envelopes as seen from it).
func MustLoad(tb TB, dir string) []Sample {
	tb.Helper()
	all, err := Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return all
}

// Load reads every <dialect>/<name>.http under dir (testdata/envelopes), sorted by path.
func Load(dir string) ([]Sample, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.http"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no corpus under %s", dir)
	}
	sort.Strings(files)
	out := make([]Sample, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s, err := ParseHTTP(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		s.Dialect = filepath.Base(filepath.Dir(f))
		s.Name = strings.TrimSuffix(filepath.Base(f), ".http")
		s.Path = strings.TrimSuffix(f, ".http")
		out = append(out, s)
	}
	return out, nil
}

// ParseHTTP reads a recorded response: status line, header lines, blank line, body. The body is
// taken byte for byte (framing headers such as Transfer-Encoding are recorded, not applied).
func ParseHTTP(raw []byte) (Sample, error) {
	var s Sample
	raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	head, body, _ := bytes.Cut(raw, []byte("\n\n"))
	lines := strings.Split(string(head), "\n")
	parts := strings.SplitN(lines[0], " ", 3)
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/") {
		return s, fmt.Errorf("bad status line %q", lines[0])
	}
	status, err := strconv.Atoi(parts[1])
	if err != nil {
		return s, fmt.Errorf("bad status %q", parts[1])
	}
	s.Status = status
	s.Header = http.Header{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return s, fmt.Errorf("bad header line %q", l)
		}
		s.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	s.Body = body
	return s, nil
}

// ByDialect groups samples by dialect, the dialects in the order they first appear.
func ByDialect(samples []Sample) (dialects []string, by map[string][]Sample) {
	by = map[string][]Sample{}
	for _, s := range samples {
		if _, ok := by[s.Dialect]; !ok {
			dialects = append(dialects, s.Dialect)
		}
		by[s.Dialect] = append(by[s.Dialect], s)
	}
	return dialects, by
}

// AgentEnvelope is the ~1 KB agent envelope of the README's speed goal (three issues, the
// violated schema, the decision fields), which remedy's benchmarks and the bench module's
// both measure: the same bytes by construction.
var AgentEnvelope = []byte(`{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation: 3 issues.",
"issues":[{"path":["customer_id"],"pointer":"/customer_id","code":"required","message":"customer_id is required","expected":{"type":"string","pattern":"^cus_[A-Za-z0-9]{14}$"}},
{"path":["currency"],"pointer":"/currency","code":"enum","message":"currency must be one of usd, eur, gbp","received":"USD$","allowed_values":["usd","eur","gbp"],"suggested_value":"usd"},
{"path":["items",2,"quantity"],"pointer":"/items/2/quantity","code":"maximum","message":"quantity must be at most 100","expected":{"maximum":100},"received":250,"suggested_value":100}],
"schema":{"type":"object","required":["customer_id","currency"],"properties":{"currency":{"type":"string","enum":["usd","eur","gbp"]}}},
"retryable":true,"hint":"Fix the listed fields and send the request again; nothing was created.","severity":"error","category":"validation",
"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","docs_url":"https://docs.example.com/errors/invalid_body"}}`)

// FormatHTTP writes a response in the corpus's .http form, which ParseHTTP reads: the status
// line, the headers sorted by name (every value), a blank line, the body as sent. The
// programs that record a peer's answers write them with it.
func FormatHTTP(status int, header http.Header, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\n", status, http.StatusText(status))
	keys := make([]string, 0, len(header))
	for k := range header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range header[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.WriteByte('\n')
	b.Write(body)
	return b.Bytes()
}

// Recording is a peer's answer as a test recorded it in the corpus: the file at Path, and how
// to record it again (Rerun: the go test command with -capture).
type Recording struct {
	Path, Rerun string
}

// Check compares a live answer, in the corpus's format (FormatHTTP), with the recording; with
// rewrite set (a test's -capture flag) it writes the answer there instead. It reports what it
// found on tb: a missing recording or a changed answer fails the test, with the way to record it.
func (r Recording) Check(tb TB, got []byte, rewrite bool) {
	tb.Helper()
	if rewrite {
		if err := os.WriteFile(r.Path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(r.Path)
	if err != nil {
		tb.Fatalf("%v (run %s)", err, r.Rerun)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("the peer's answer changed (%s to record it); recorded:\n%s\nnow:\n%s", r.Rerun, want, got)
	}
}

// TB is what Check reports to: a *testing.T or *testing.B (kept an interface here so that
// the corpus's readers, which the benchmarks use, do not import package testing).
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// HugeAgentEnvelope is a valid agent envelope of at least size bytes: the members given, a
// message, then a long list of issues.
func HugeAgentEnvelope(members string, size int) string {
	var b strings.Builder
	b.WriteString(`{"error":{"statusCode":503,` + members + `,"message":"The account is closed.","issues":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"path":["items",` + strconv.Itoa(i) + `,"sku"],"code":"unknown","message":"no such sku","retryable":true}`)
	}
	b.WriteString(`]}}`)
	return b.String()
}
