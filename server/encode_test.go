package server

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
)

// emRefusal is the envelope the pipeline answers body with, when v refuses it (nil when it
// accepts it or it is not JSON), as the validate stage makes it.
func emRefusal(t testing.TB, v *validator, body string) *remedy.Envelope {
	t.Helper()
	inst, err := decodeBody([]byte(body))
	if err != nil {
		return nil
	}
	issues, violated, total, atLeast := v.check(inst)
	if len(issues) == 0 {
		return nil
	}
	x := &exchange{op: &Operation{validator: v}}
	p := x.invalidOf(issues, violated, total, atLeast)
	c, ok := NewRegistry().Lookup(p.Code)
	require.True(t, ok)
	env := p.envelope(c)
	capIssues(env)
	env.TraceID = "0af7651916cd43dd8448eb211c80319c"
	require.Equal(t, v.plain, p.made)
	return env
}

// emCompare checks that encodeMade writes what MarshalJSON writes, when it writes anything.
func emCompare(t testing.TB, env *remedy.Envelope) (written bool) {
	t.Helper()
	want, err := env.MarshalJSON()
	require.NoError(t, err)
	got, ok := encodeMade(nil, env)
	if !ok {
		return false
	}
	if string(got) != string(want) {
		t.Fatalf("encodeMade differs from MarshalJSON:\n got %s\nwant %s", got, want)
	}
	return true
}

// TestEncodeMade holds encodeMade to MarshalJSON on the refusals of random mutations of valid
// inputs, for every schema of the explanation's tests.
func TestEncodeMade(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(3, 4))
	written := 0
	for name, v := range xpSchemas(t) {
		require.True(t, v.plain, name)
		pool := xpKeys(v)
		var base any
		seed := map[string]string{"vtOrder": vtOrderJSON(t, nil), "root array": `["a"]`}[name]
		if seed == "" {
			seed = `{"a":"ABC","b":3,"name":"root","customer_id":"cus_1","items":[{"sku":"a","quantity":1}]}`
		}
		require.NoError(t, json.Unmarshal([]byte(seed), &base))
		for range 1500 {
			b, err := json.Marshal(xpMutate(rnd, xpCopy(base), pool, 1+rnd.IntN(4)))
			require.NoError(t, err)
			if env := emRefusal(t, v, string(b)); env != nil && emCompare(t, env) {
				written++
			}
		}
	}
	assert.Greater(t, written, 3000)
}

// The values the validator echoes can be beyond what remedy's encoder keeps: encodeMade then
// leaves the answer to it.
func TestEncodeMadeLeavesWhatTheEncoderDrops(t *testing.T) {
	t.Parallel()
	v := xpSchemas(t)["xpOrder"]
	long := strings.Repeat("7", 70)
	for _, body := range []string{
		`{"customer_id":` + long + `,"email":"a@b.co","currency":"usd","items":[{"sku":"a","quantity":1,"price":1}]}`,
		// a suggestion: the number the string holds
		`{"customer_id":"cus_1","email":"a@b.co","currency":"usd","items":[{"sku":"a","quantity":1,"price":"` + long + `"}]}`,
	} {
		env := emRefusal(t, v, body)
		require.NotNil(t, env, body)
		_, ok := encodeMade(nil, env)
		assert.False(t, ok, "%s", body)
		out, _ := env.MarshalJSON()
		assert.Contains(t, string(out), "null", "the encoder drops the value")
	}
	// A schema whose document the encoder would not keep (a default naming a key twice) has
	// its refusals written by MarshalJSON.
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"a": {Type: "object", Default: json.RawMessage(`{"k":1,"k":2}`)},
	}}
	dup, err := newValidator(s)
	require.NoError(t, err)
	assert.False(t, dup.plain)
	assert.True(t, xpSchemas(t)["xpOrder"].plain)
}

// TestEncodeMadeTexts holds encodeMade to MarshalJSON on envelopes whose texts need every
// kind of escape, and on the members a refusal does not use.
func TestEncodeMadeTexts(t *testing.T) {
	t.Parallel()
	texts := []string{"", "plain", `q"uote`, `back\slash`, "tab\tnew\nline\rret", "\x00\x01\x1f\x7f", "<&>",
		"é ü 日本", "\u2028\u2029", "bad \xff utf-8", "\xed\xa0\x80", "~0~1/", "/a~1b/0/01/1234567890/~"}
	for i, s := range texts {
		other := texts[(i+3)%len(texts)]
		env := &remedy.Envelope{Status: 422, Code: s, Type: other, Title: s, Message: other, Retryable: i%2 == 0,
			RetryAfter: 1500 * 1e6, Hint: s, Suggestions: []string{s, other}, Severity: remedy.Severity(s),
			Category: remedy.Category(other), NextOperation: s, ConfirmationToken: other, CurrentStatus: s,
			RequiredStatus: other, TraceID: s, RequestID: other, DocsURL: s, RelatedCodes: []string{other},
			Intent: s, DeprecatedType: other, Schema: json.RawMessage(`{"type":"object"}`),
			Issues: []remedy.Issue{{Path: "/" + s, Code: s, Message: other, Expected: json.RawMessage(`{"a":[1,2]}`),
				Received: json.RawMessage(`"x"`), AllowedValues: []json.RawMessage{json.RawMessage(`1`), nil, json.RawMessage(`"y"`)},
				SuggestedValue: json.RawMessage(`true`)}, {Path: s}},
		}
		require.True(t, emCompare(t, env), "%q", s)
	}
	require.True(t, emCompare(t, &remedy.Envelope{}))
	require.True(t, emCompare(t, &remedy.Envelope{Issues: []remedy.Issue{{}}}))
}

// FuzzEncodeMade holds encodeMade to MarshalJSON on any texts, and on any value the validator
// may echo (what arrived, decoded and encoded again as issueReceived does).
func FuzzEncodeMade(f *testing.F) {
	f.Add("/items/0/sku", "must match", `{"a":[1,"x",{"b":null}]}`)
	f.Add("/a~1b/~0", "\xff\t<", `"é\u2028"`)
	f.Add("", "", strings.Repeat("9", 80))
	f.Fuzz(func(t *testing.T, path, message, value string) {
		inst, err := decodeInstance([]byte(value))
		if err != nil {
			return
		}
		received := issueReceived(inst)
		env := &remedy.Envelope{Status: 422, Code: "invalid_body", Message: message, TraceID: path,
			Issues: []remedy.Issue{{Path: path, Code: message, Message: message, Received: received,
				Expected: received, SuggestedValue: received, AllowedValues: []json.RawMessage{received}}}}
		emCompare(t, env)
	})
}

// The buffer is allocated once, at about the answer's size (remedy's encoder sizes it from the
// envelope's texts and values).
func TestEncodeMadeSize(t *testing.T) { // not parallel: it counts allocations
	v := xpSchemas(t)["xpOrder"]
	env := emRefusal(t, v, `{"customer_id":"CUS-8F3K2","email":"ada@example.com","currency":"usd$",`+
		`"items":[{"sku":"book-1","quantity":250,"price":12.5}]}`)
	require.NotNil(t, env)
	b, ok := encodeMade(nil, env)
	require.True(t, ok)
	assert.Less(t, cap(b), 2*len(b), "the buffer is more than twice the answer")
	if !testing.Short() {
		allocs := testing.AllocsPerRun(20, func() { encodeMade(nil, env) })
		assert.LessOrEqual(t, allocs, 1.0, "encodeMade allocated more than its buffer")
	}
}

// TestRefusalPipeline holds the pipeline's refusals to the envelope the validator's issues
// make, written by remedy's encoder: the explanation, the envelope on the stack and encodeMade
// together give the same bytes.
func TestRefusalPipeline(t *testing.T) {
	t.Parallel()
	api, err := New()
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, Post(api, "/v1/orders", func(ctx context.Context, in xpOrder) (struct{}, error) {
		return struct{}{}, nil
	}, OperationID("create_order")))
	v := api.ops[0].validator
	const trace = "0af7651916cd43dd8448eb211c80319c"
	rnd := rand.New(rand.NewPCG(8, 9))
	var base any
	require.NoError(t, json.Unmarshal([]byte(`{"customer_id":"cus_1","email":"a@b.co","currency":"usd",`+
		`"items":[{"sku":"a","quantity":1,"price":2}],"note":"n","gift":true}`), &base))
	refused := 0
	for range 1500 {
		body, err := json.Marshal(xpMutate(rnd, xpCopy(base), xpKeys(v), 1+rnd.IntN(3)))
		require.NoError(t, err)
		env := emRefusal(t, v, string(body))
		if env == nil {
			continue
		}
		want, err := env.MarshalJSON()
		require.NoError(t, err)
		req := httptest.NewRequest("POST", "/v1/orders", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Traceparent", "00-"+trace+"-b7ad6b7169203331-01")
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		require.Equal(t, env.Status, w.Code, "%s", body)
		require.Equal(t, string(want), w.Body.String(), "%s", body)
		require.Equal(t, strconv.Itoa(len(want)), w.Header().Get("Content-Length"))
		refused++
	}
	assert.Greater(t, refused, 500)
}
