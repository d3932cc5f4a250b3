package remedy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/remedy-go/remedy/internal/tape"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

// The prefix scanner's properties, checked on every cut of every seed (TestPrefixEveryCut) and
// on whatever the fuzzer makes up (FuzzPrefix):
//
//  1. It never panics, and a prefix it refuses (not the start of JSON) stays refused however
//     the body goes on.
//  2. A cut never makes it report what the whole body does not say: a field it reads from a
//     prefix has the same value in the whole body, unless the body goes on to state the field
//     again in a way that makes it unknown.
//  3. On a complete body the full parse reads in the same place (the "error" object for the
//     agent dialects, the top level for RFC 9457 and AX), each field it reports is what the
//     full parse read.
//  4. Parse and Classify read a cut body alike, and neither takes issues or nested failures
//     from it.

// prefixSeeds are the bodies of the corpus and a few made to cross the scanner's edges.
func prefixSeeds(tb testing.TB) []string {
	tb.Helper()
	all, err := corpus.Load(filepath.Join("testdata", "envelopes"))
	if err != nil {
		tb.Fatal(err)
	}
	seeds := []string{
		`{"error":{"code":"account_closed","retryable":false,"message":"Closed.","issues":[{"path":["a"],"retryable":true}]}}`,
		`{"error":{"retryable":true,"retry_after_ms":1200,"code":"rate_limited"}}`,
		`{"error":{"code":"x","retryable":false,"retryable":true}}`,
		`{"error":{"retryable":false,"is_retriable":true}}`,
		`{"error":{"retry_after_ms":100,"retryAfterMs":200}}`,
		`{"error":{"code":"rate\u005flimited","message":"a \"quoted\" \\ \ud83d\ude00 word","severity":"FATAL"}}`,
		`{"\u0072etryable":false,"type":"https://example.com/probs/out-of-credit","retry_after_seconds":"30"}`,
		`{"type":"about:blank","title":"t","status":503,"is_retriable":true,"retry_after_ms":0}`,
		`{"retryable":false,"error":{"code":"unavailable","schema":{"retryable":true}}}`,
		`{"error":{"code":503,"message":"m","status":"UNAVAILABLE","details":[{"retryable":false}]}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"error":{"code":"invalid_request","type":"invalid_request_error","category":"validation"}}`,
		`{"error":"x","error":{"code":"y"}}`,
		`{"error":{"code":{"a":1},"error_code":"z","retry_after_ms":[1]}}`,
		`{"data":{"retryable":false},"error":null,"code":"top","retryable":false}`,
		`{"error_code":"RATE_LIMITED","message":"slow","details":[{"field":"a"}],"retryable":true}`,
		`{"error":{"code":"x","retry_after_ms":1e400,"retry_after_seconds":-1,"severity":7}}`,
		"{\"error\":{\"code\":\"x\",\"message\":\"caf\xc3\xa9\",\"retryable\":false}}",
		`  {"error" : { "code" : "spaced" , "retryable" : true , "retry_after_ms" : 250 } }  `,
		`{"error":{"code":"x","retryable":true}}` + "garbage",
		`[{"error":{"retryable":false}}]`,
		`{"a":` + strings.Repeat(`[`, 70) + `1` + strings.Repeat(`]`, 70) + `,"error":{"retryable":false}}`,
	}
	for _, s := range all {
		seeds = append(seeds, string(s.Body))
	}
	return seeds
}

func TestPrefixEveryCut(t *testing.T) {
	t.Parallel()
	for _, s := range prefixSeeds(t) {
		for n := 0; n <= len(s); n++ {
			checkPrefix(t, s, n)
		}
	}
}

func FuzzPrefix(f *testing.F) {
	for _, s := range prefixSeeds(f) {
		f.Add([]byte(s), uint(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, body []byte, cut uint) {
		s := string(body)
		checkPrefix(t, s, int(cut%uint(len(s)+1)))
		checkPrefix(t, s, len(s))
	})
}

// checkPrefix checks the properties above for the body s cut after n bytes.
func checkPrefix(t *testing.T, s string, n int) {
	t.Helper()
	var cut, whole prefixScan
	cutOK, wholeOK := cut.scan(s[:n], true), whole.scan(s, true)

	// 1. A refused prefix stays refused.
	if !cutOK && wholeOK && jsonscanStarted(s[:n]) {
		t.Fatalf("the prefix %q is refused, the whole body %q is not", s[:n], s)
	}
	// 2. A cut reports nothing the whole body does not say.
	if cutOK && wholeOK {
		samePrefixLevel(t, s, n, "top", &cut.top, &whole.top)
		samePrefixLevel(t, s, n, "error", &cut.err, &whole.err)
	}
	// 3. Against the full parse, on a complete body.
	if n == len(s) && wholeOK && tape.Valid(s) {
		agreesWithFullParse(t, s, &whole)
	}
	// 4. Parse and Classify read a cut body alike.
	if n > 0 {
		p := parser{status: 503, body: s[:n], full: true, truncated: true}
		c := parser{status: 503, body: s[:n], truncated: true}
		if !p.run() || !c.run() {
			t.Fatalf("%q: a 503 is not a failure", s[:n])
		}
		a, b := &p.e, &c.e
		if a.Dialect != b.Dialect || a.Code != b.Code || a.Retryable != b.Retryable || a.RetrySource != b.RetrySource ||
			a.RetryAfter != b.RetryAfter || a.Severity != b.Severity || a.Category != b.Category || a.Status != b.Status {
			t.Fatalf("%q: Parse and Classify disagree:\n%+v\n%+v", s[:n], *a, *b)
		}
		if a.Dialect != DialectTruncated && a.Dialect != DialectUnstructured {
			t.Fatalf("%q: a cut body read as %s", s[:n], a.Dialect)
		}
		if len(a.Issues) > 0 || len(a.Errors) > 0 || a.Schema != nil {
			t.Fatalf("%q: details read from a prefix: %+v", s[:n], *a)
		}
		var trimmed prefixScan // what run hands the scanner
		if a.Dialect == DialectTruncated && !trimmed.scan(strings.TrimSpace(strings.TrimPrefix(s[:n], "\ufeff")), true) {
			t.Fatalf("%q: read from a prefix the scanner refused", s[:n])
		}
	}
}

// jsonscanStarted reports whether s holds the start of a value (the scanner refuses a prefix
// that does not, whatever follows).
func jsonscanStarted(s string) bool { return strings.TrimLeft(s, " \t\r\n") != "" }

// prefixValueOf is the value a level holds for f, for comparing.
func prefixValueOf(l *prefixLevel, f prefixField) any {
	switch f {
	case pfCode:
		return l.code
	case pfMessage:
		return l.message
	case pfType:
		return l.typ
	case pfStatus:
		return l.status
	case pfFlag:
		return l.flag
	case pfMs:
		return l.ms
	case pfSec:
		return l.sec
	case pfSeverity:
		return l.severity
	case pfCategory:
		return l.category
	}
	return nil
}

func samePrefixLevel(t *testing.T, s string, n int, name string, cut, whole *prefixLevel) {
	t.Helper()
	for f := pfCode; f < pfError; f++ {
		if !cut.known(f) || whole.unknown&(1<<f) != 0 {
			continue
		}
		if !whole.known(f) {
			t.Fatalf("%q cut at %d: %s field %d read from the prefix, not from the whole body", s, n, name, f)
		}
		if a, b := prefixValueOf(cut, f), prefixValueOf(whole, f); a != b {
			t.Fatalf("%q cut at %d: %s field %d is %v in the prefix, %v in the whole body", s, n, name, f, a, b)
		}
	}
}

// agreesWithFullParse compares what the scanner read from a complete body with what the full
// parse read, when both read the same object.
func agreesWithFullParse(t *testing.T, s string, r *prefixScan) {
	t.Helper()
	p := parser{status: 400, body: s, full: true}
	p.run()
	e := &p.e
	switch e.Dialect {
	case DialectAgent, DialectAgentSpec:
		if !r.inError {
			t.Fatalf("%q: the full parse read the error object, the scanner did not", s)
		}
	case DialectProblem, DialectAX:
		if r.inError {
			return // a problem that also holds an "error" object: the scanner reads the object
		}
	default:
		return
	}
	l := r.level()
	check := func(f prefixField, full, prefix any) {
		if l.known(f) && full != prefix {
			t.Fatalf("%q: field %d is %v in the full parse (%s), %v in the prefix", s, f, full, e.Dialect, prefix)
		}
	}
	check(pfCode, e.Code, l.code)
	check(pfMessage, e.Message, l.message)
	check(pfFlag, p.facts.flag, l.flag)
	check(pfMs, p.facts.bodyMs, l.ms)
	check(pfSec, p.facts.bodySec, l.sec)
	severity := l.severity
	if severity == "" {
		severity = SeverityError
	}
	check(pfSeverity, e.Severity, severity)
	if l.category != "" {
		check(pfCategory, e.Category, l.category)
	}
}
