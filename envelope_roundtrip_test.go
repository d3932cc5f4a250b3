package remedy_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// comparable strips what an encoding does not carry: which dialect was read, which rule made
// the retry decision (after encoding it is always the body's flag), and header-only facts.
func comparable(e *remedy.Envelope) view {
	v := toView(e)
	var strip func(v *view)
	strip = func(v *view) {
		v.Dialect, v.RetrySource, v.Replayed = "", "", false
		for i := range v.Errors {
			strip(&v.Errors[i])
		}
	}
	strip(&v)
	return v
}

// TestCanonicalRoundTrip: over the whole corpus, parsing the canonical encoding and the RFC
// 9457 encoding of an envelope gives back the same normalized envelope.
func TestCanonicalRoundTrip(t *testing.T) {
	for _, s := range loadCorpus(t) {
		t.Run(s.dialect+"/"+s.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(s.status, s.header, s.body)
			require.True(t, ok)
			want := comparable(e)

			canonical, err := json.Marshal(e)
			require.NoError(t, err)
			require.True(t, json.Valid(canonical), "%s", canonical)
			// An in-band failure's envelope travels without a failure status of its own (as
			// MCP structuredContent): the body alone decides.
			transport := e.Status
			if transport < 400 {
				transport = 0
			}
			back, ok := remedy.Parse(transport, nil, canonical)
			require.True(t, ok, "canonical form not read as a failure: %s", canonical)
			assert.Equal(t, remedy.DialectAgent, back.Dialect)
			assert.Equal(t, want, comparable(back), "canonical: %s", canonical)

			problem, err := e.MarshalProblem()
			require.NoError(t, err)
			require.True(t, json.Valid(problem), "%s", problem)
			h := http.Header{"Content-Type": {remedy.ProblemContentType}}
			back, ok = remedy.Parse(transport, h, problem)
			require.True(t, ok, "problem form not read as a failure: %s", problem)
			assert.Equal(t, remedy.DialectProblem, back.Dialect)
			assert.Equal(t, want, comparable(back), "problem: %s", problem)
		})
	}
}

// TestClassifyAgreesWithParse: the allocation-free path decides exactly as Parse does.
func TestClassifyAgreesWithParse(t *testing.T) {
	for _, s := range loadCorpus(t) {
		t.Run(s.dialect+"/"+s.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(s.status, s.header, s.body)
			require.True(t, ok)
			v := remedy.Classify(s.status, s.header, s.body)
			assert.Equal(t, remedy.Verdict{
				Failure: true, Status: e.Status, Retryable: e.Retryable, RetrySource: e.RetrySource,
				RetryAfter: e.RetryAfter, Severity: e.Severity, Category: e.Category, Dialect: e.Dialect,
			}, v)
		})
	}
}

// TestPromptBounded: every prompt of the corpus is short, and says whether to retry.
func TestPromptBounded(t *testing.T) {
	for _, s := range loadCorpus(t) {
		e, _ := remedy.Parse(s.status, s.header, s.body)
		p := e.Prompt()
		assert.LessOrEqual(t, len(p), 1024, "%s/%s", s.dialect, s.name)
		assert.Contains(t, p, e.Code, "%s/%s", s.dialect, s.name)
	}
}

// The envelope owns its strings: overwriting the caller's buffer after Parse (as a client
// reusing a read buffer does) changes nothing in it, on every file of the corpus.
func TestEnvelopeDoesNotAliasBody(t *testing.T) {
	t.Parallel()
	for _, s := range loadCorpus(t) {
		want, _ := remedy.Parse(s.status, s.header, s.body)
		buf := bytes.Clone(s.body)
		got, _ := remedy.Parse(s.status, s.header, buf)
		for i := range buf {
			buf[i] = '#'
		}
		wantJSON, _ := json.Marshal(toView(want))
		gotJSON, _ := json.Marshal(toView(got))
		if !bytes.Equal(wantJSON, gotJSON) {
			t.Errorf("%s: envelope changed when the body buffer was reused:\n got %s\nwant %s", s.path, gotJSON, wantJSON)
		}
	}
}
