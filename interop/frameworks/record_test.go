package frameworks

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

var capture = flag.Bool("capture", false, "record the frameworks' answers again, into ../../testdata/envelopes")

// envelopesDir is the root module's envelope corpus: one directory per dialect.
var envelopesDir = filepath.Join("..", "..", "testdata", "envelopes")

// hangGuard bounds a request to a framework: it is never reached unless something hangs.
const hangGuard = 30 * time.Second

// request is a failing call: what is sent to the framework.
type request struct {
	method, path string
	body         string // sent as application/json unless contentType says otherwise
	contentType  string
	header       map[string]string
}

// recording is one failure a framework answers in its default setup, and the facts its
// documentation says the answer states: what remedy.Parse must read from it.
type recording struct {
	name    string // the file's name, <framework>-<case>
	dialect remedy.Dialect
	req     request
	want    want
	// repeat sends the request this many times before the one recorded (a rate limit's
	// budget); 0 sends it once.
	repeat int
	// canonical, when set, is the form of the body the corpus keeps, for a framework whose
	// output varies between runs by design (protojsonCanonical); Parse still reads the body
	// as sent.
	canonical func([]byte) []byte
	// clock maps each header that counts a rate limit's window down with the clock (seconds
	// left, rounded up) to its value at the window's start, as the framework's documentation
	// states it. The live value must have the same form with no number greater; the stated
	// one is recorded and parsed, so that a slow machine changes no recording.
	clock map[string]string
}

// want is what Parse must read: every field is checked, the issues exactly (no issue more,
// none less, no fact more: a wrong fact is worse than a missing one).
type want struct {
	status     int
	code       string
	retryable  bool
	retryAfter time.Duration
	issues     []issue
}

// issue is one field fact Parse must read. expected and received are JSON; allowed is the
// allowed values, each JSON.
type issue struct {
	path, code         string
	expected, received string
	allowed            []string
}

func (i issue) String() string {
	return fmt.Sprintf("{path %q code %q expected %s received %s allowed %v}", i.path, i.code, i.expected, i.received, i.allowed)
}

// varyingHeaders differ between two runs of the same framework (clocks, connection ids); they
// are left out of the recordings.
var varyingHeaders = []string{"Date", "X-Request-Id", "Keep-Alive"}

// run sends each recording's request to the framework at base, checks the answer against the
// corpus (or, with -capture, records it there), and checks what Parse reads from it.
func run(t *testing.T, base string, recs []recording) {
	t.Helper()
	for _, rec := range recs {
		t.Run(rec.name, func(t *testing.T) {
			status, header, body := send(t, base, rec)
			for _, h := range varyingHeaders {
				header.Del(h)
			}
			for name, start := range rec.clock {
				if live := header.Get(name); !countdown(live, start) {
					t.Errorf("header %s: %q, want %q or a countdown from it", name, live, start)
				}
				header.Set(name, start)
			}
			kept := body
			if rec.canonical != nil {
				kept = rec.canonical(body)
				if header.Get("Content-Length") != "" {
					header.Set("Content-Length", strconv.Itoa(len(kept)))
				}
			}
			path := filepath.Join(envelopesDir, string(rec.dialect), rec.name+".http")
			corpus.Recording{Path: path, Rerun: "cd interop/frameworks && go test -run '" + t.Name() + "' -capture"}.
				Check(t, corpus.FormatHTTP(status, header, kept), *capture)
			check(t, status, header, body, rec)
		})
	}
}

// countdown reports whether live is start with numbers no greater: the same header some time
// later in the same window.
func countdown(live, start string) bool {
	for live != "" && start != "" {
		ln, sn := len(live)-len(strings.TrimLeft(live, "0123456789")), len(start)-len(strings.TrimLeft(start, "0123456789"))
		if ln > 0 && sn > 0 {
			l, errL := strconv.Atoi(live[:ln])
			s, errS := strconv.Atoi(start[:sn])
			if errL != nil || errS != nil || l > s {
				return false
			}
		} else if live[0] != start[0] {
			return false
		} else {
			ln, sn = 1, 1
		}
		live, start = live[ln:], start[sn:]
	}
	return live == "" && start == ""
}

// send sends rec's request (rec.repeat+1 times) and returns the last answer.
func send(t *testing.T, base string, rec recording) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	var (
		status int
		header http.Header
		body   []byte
	)
	for range rec.repeat + 1 {
		var rd io.Reader
		if rec.req.body != "" {
			rd = strings.NewReader(rec.req.body)
		}
		req, err := http.NewRequestWithContext(ctx, rec.req.method, base+rec.req.path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if rec.req.body != "" {
			ct := rec.req.contentType
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
		}
		for k, v := range rec.req.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		status, header = resp.StatusCode, resp.Header
	}
	return status, header, body
}

// check compares what Parse reads from the answer with rec.want.
func check(t *testing.T, status int, header http.Header, body []byte, rec recording) {
	t.Helper()
	e, failed := remedy.Parse(status, header, body)
	if !failed {
		t.Fatalf("Parse did not read a failure in %d %s", status, body)
	}
	w := rec.want
	if e.Dialect != rec.dialect {
		t.Errorf("dialect %q, want %q", e.Dialect, rec.dialect)
	}
	if e.Status != w.status {
		t.Errorf("status %d, want %d", e.Status, w.status)
	}
	if e.Code != w.code {
		t.Errorf("code %q, want %q", e.Code, w.code)
	}
	if e.Retryable != w.retryable {
		t.Errorf("retryable %v (from %s), want %v", e.Retryable, e.RetrySource, w.retryable)
	}
	if e.RetryAfter != w.retryAfter {
		t.Errorf("retry after %v, want %v", e.RetryAfter, w.retryAfter)
	}
	got := make([]string, 0, len(e.Issues))
	for _, is := range e.Issues {
		got = append(got, issueOf(is).String())
	}
	wantIssues := make([]string, 0, len(w.issues))
	for _, is := range w.issues {
		wantIssues = append(wantIssues, normalized(t, is).String())
	}
	slices.Sort(got)
	slices.Sort(wantIssues)
	if !slices.Equal(got, wantIssues) {
		t.Errorf("issues read:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(wantIssues, "\n\t"))
	}
}

// issueOf is the facts of a parsed issue, its JSON compacted.
func issueOf(is remedy.Issue) issue {
	out := issue{path: is.Path, code: is.Code, expected: compact(is.Expected), received: compact(is.Received)}
	for _, v := range is.AllowedValues {
		out.allowed = append(out.allowed, compact(v))
	}
	return out
}

// normalized is a wanted issue with its JSON compacted, as issueOf writes it.
func normalized(t *testing.T, is issue) issue {
	t.Helper()
	out := is
	out.expected, out.received = mustCompact(t, is.expected), mustCompact(t, is.received)
	out.allowed = nil
	for _, v := range is.allowed {
		out.allowed = append(out.allowed, mustCompact(t, v))
	}
	return out
}

func compact(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "!" + string(raw)
	}
	return b.String()
}

func mustCompact(t *testing.T, s string) string {
	t.Helper()
	if s == "" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("a wanted fact is not JSON: %s", s)
	}
	return b.String()
}
