package bench

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

// TestLargeAgentBody holds the size benchmark to what it claims: the ~1 MB body is valid JSON
// of the 1 KB body's shape, under DefaultMaxBody so that Parse reads all of it (not the
// prefix it reads of a longer body), read as the same dialect with issues from first to last,
// and built the same way every time.
func TestLargeAgentBody(t *testing.T) {
	body := largeAgentBody
	if n := len(body); n > largeBodySize || n < largeBodySize-1000 || n > remedy.DefaultMaxBody {
		t.Fatalf("%d bytes, want at most %d and within 1000 of it (DefaultMaxBody %d)", n, largeBodySize, remedy.DefaultMaxBody)
	}
	if !json.Valid(body) || !gojson.Valid(body) {
		t.Fatal("not valid JSON")
	}
	if !bytes.Equal(body, buildAgentEnvelope(largeBodySize)) {
		t.Error("two builds differ")
	}
	var doc struct {
		Error struct {
			Issues []json.RawMessage `json:"issues"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if n := len(doc.Error.Issues); n < 3000 {
		t.Errorf("%d issues, want thousands", n)
	}

	small, ok := remedy.Parse(422, nil, agentBody)
	if !ok {
		t.Fatal("the 1 KB body is not a failure")
	}
	large, ok := remedy.Parse(422, nil, body)
	if !ok {
		t.Fatal("the 1 MB body is not a failure")
	}
	if large.Dialect != small.Dialect || large.Dialect == remedy.DialectTruncated || large.Code != small.Code {
		t.Errorf("1 MB: dialect %q, code %q; 1 KB: %q, %q", large.Dialect, large.Code, small.Dialect, small.Code)
	}
	// Parse may keep fewer issues than the body lists, but it reads them from the start.
	if len(large.Issues) < 3 || large.Issues[0].Code != "required" || large.Issues[2].Code != "maximum" {
		t.Errorf("issues read from the 1 MB body: %+v", large.Issues[:min(3, len(large.Issues))])
	}
}

// TestGoccyValidates holds the goccy baseline to a real validation: its Valid agrees with
// encoding/json's on every body the benchmarks give it, so it reads each one to its end or to
// the same error, and takes no shortcut.
func TestGoccyValidates(t *testing.T) {
	all, err := corpus.Load(filepath.Join("..", "testdata", "envelopes"))
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{agentBody, largeAgentBody, []byte(`{"a":1`), []byte(`{"a":1,"a":2}`)}
	for _, s := range all {
		bodies = append(bodies, s.Body)
	}
	for _, body := range bodies {
		if gojson.Valid(body) != json.Valid(body) {
			t.Errorf("goccy Valid and encoding/json Valid disagree on %.60q", body)
		}
	}
}

// TestGoccyDecodes holds the goccy-decode baseline to the job it stands for: decoding the
// agent envelopes into agentShape keeps what Parse keeps of them (the code, the message,
// every issue's pointer, code and raw values), so that it reads every member Parse reads and
// skips none.
func TestGoccyDecodes(t *testing.T) {
	for _, body := range [][]byte{agentBody, largeAgentBody} {
		var got agentShape
		if err := gojson.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		e, ok := remedy.Parse(422, nil, body)
		if !ok {
			t.Fatal("not a failure")
		}
		g := got.Error
		if g.Code != e.Code || g.Message != e.Message || g.Hint != e.Hint || g.TraceID != e.TraceID || g.StatusCode != e.Status {
			t.Errorf("decoded %q %q %q %q %d, Parse read %q %q %q %q %d", g.Code, g.Message, g.Hint, g.TraceID, g.StatusCode,
				e.Code, e.Message, e.Hint, e.TraceID, e.Status)
		}
		if len(g.Issues) < len(e.Issues) || len(e.Issues) < 3 {
			t.Fatalf("decoded %d issues, Parse kept %d", len(g.Issues), len(e.Issues))
		}
		for i, is := range e.Issues {
			d := g.Issues[i]
			if d.Pointer != is.Path || d.Code != is.Code || d.Message != is.Message ||
				!bytes.Equal(d.Received, is.Received) || len(d.Allowed) != len(is.AllowedValues) {
				t.Errorf("issue %d: decoded %+v, Parse read %+v", i, d, is)
			}
		}
	}
}
