package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/rewrite"
)

// paintSchema is the published schema of the paint operation: a color of two, a quantity of
// 1 to 100.
const paintSchema = `{"type":"object","properties":{
	"color":{"type":"string","enum":["red","green"]},
	"quantity":{"type":"integer","minimum":1,"maximum":100}},
	"required":["color","quantity"],"additionalProperties":false}`

// paintServer is a real server of the paint operation that says nothing useful when it
// refuses: a bare 400 "bad request" in plain text for any body it does not accept (a color
// other than red or green, a quantity that is not an integer from 1 to maxQty). It counts
// what it received.
type paintServer struct {
	*scripted
	created atomic.Int32
}

func newPaintServer(t *testing.T, maxQty int) *paintServer {
	t.Helper()
	p := &paintServer{}
	p.scripted = newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		reqs := p.Requests()
		var in struct {
			Color    *string          `json:"color"`
			Quantity *json.RawMessage `json:"quantity"`
		}
		var qty int
		if json.Unmarshal(reqs[len(reqs)-1].Body, &in) != nil || in.Color == nil || in.Quantity == nil ||
			(*in.Color != "red" && *in.Color != "green") || json.Unmarshal(*in.Quantity, &qty) != nil ||
			qty < 1 || qty > maxQty {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte("bad request"))
			return
		}
		p.created.Add(1)
		reply(w, 201, `{"id":"p_1"}`)
	})
	return p
}

var opPaint = client.Operation{Name: "paint", Method: "POST", Path: "/v1/paint", Parameters: json.RawMessage(paintSchema)}

// rules lists the rules of changes, in order.
func rules(changes []rewrite.Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Rule)
	}
	return out
}

// A server whose whole answer to a wrong call is "bad request" is still repaired from the
// schema: the check before sending repairs the enum's case and the integer sent as text, and
// the call costs one request. Without the schema, the same call stops after one request: the
// failure names nothing to repair.
func TestSchemaCheckRepairsBeforeSending(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"color":"RED","quantity":"5"}`)
	t.Run("with the schema", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 100)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint))
		resp, err := c.Call(context.Background(), "paint", args)
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.JSONEq(t, `{"color":"red","quantity":5}`, string(reqs[0].Body))
		require.Len(t, resp.Attempts, 1)
		assert.ElementsMatch(t, []string{"enum_match", "coerce"}, rules(resp.Attempts[0].Checked))
		assert.Empty(t, resp.Attempts[0].Changes, "nothing was changed after a failure")
		for _, ch := range resp.Attempts[0].Checked {
			assert.False(t, ch.Lossy, "%+v", ch)
		}
		assert.EqualValues(t, 1, srv.created.Load())
	})
	t.Run("without the schema", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 100)
		op := opPaint
		op.Parameters = nil
		c := newClient(t, srv.scripted, client.WithOperations(op))
		_, err := c.Call(context.Background(), "paint", args)
		ce := callError(t, err, client.ErrNotRetryable)
		require.Len(t, ce.Attempts, 1)
		assert.Empty(t, ce.Attempts[0].Checked)
		assert.Len(t, srv.Requests(), 1)
		assert.Zero(t, srv.created.Load())
	})
	t.Run("a server that takes it either way", func(t *testing.T) {
		t.Parallel()
		// The server takes "RED" too, contradicting its schema: the repair is lossless, and
		// made all the same — the call means what it meant.
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 201, bodyOK) })
		c := newClient(t, srv, client.WithOperations(opPaint))
		_, err := c.Call(context.Background(), "paint", args)
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.JSONEq(t, `{"color":"red","quantity":5}`, string(reqs[0].Body))
	})
	t.Run("check off", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 100)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint),
			client.WithSchemaCheck(client.CheckOff))
		_, err := c.Call(context.Background(), "paint", args)
		callError(t, err, client.ErrNotRetryable)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.JSONEq(t, string(args), string(reqs[0].Body), "sent unchecked")
	})
}

// A violation whose only repair changes what the call means (500 over a maximum of 100) is
// sent as it is by default — the server decides, and this one, newer than its schema, takes
// 500; CheckStrict stops the call before any request, with the clamp proposed; a policy that
// approves the clamp has it applied before sending.
func TestSchemaCheckLossyViolation(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"color":"red","quantity":500}`)
	t.Run("repair sends it unchanged", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 1000)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint))
		resp, err := c.Call(context.Background(), "paint", args)
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.JSONEq(t, string(args), string(reqs[0].Body))
		assert.Empty(t, resp.Attempts[0].Checked)
	})
	t.Run("strict stops before sending", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 1000)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint),
			client.WithSchemaCheck(client.CheckStrict))
		_, err := c.Call(context.Background(), "paint", args)
		ce := callError(t, err, client.ErrInvalidArguments)
		assert.Empty(t, srv.Requests())
		assert.Empty(t, ce.Attempts)
		require.NotNil(t, ce.Proposal)
		require.Len(t, ce.Proposal.Changes, 1)
		ch := ce.Proposal.Changes[0]
		assert.Equal(t, "/quantity", ch.Path)
		assert.Equal(t, "clamp", ch.Rule)
		assert.True(t, ch.Lossy)
		assert.JSONEq(t, `100`, string(ch.New))
		var ae *client.ArgumentsError
		require.ErrorAs(t, err, &ae)
		require.Len(t, ae.Issues, 1)
		assert.Equal(t, "/quantity", ae.Issues[0].Path)
		assert.Equal(t, "maximum", ae.Issues[0].Code)
		assert.JSONEq(t, `{"maximum":100}`, string(ae.Issues[0].Expected))
		assert.JSONEq(t, `500`, string(ae.Issues[0].Received))
		assert.Contains(t, ce.Error(), "clamp")
	})
	t.Run("an approved clamp is applied before sending", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 1000)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint),
			client.WithRewritePolicy(rewrite.All))
		resp, err := c.Call(context.Background(), "paint", args)
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.JSONEq(t, `{"color":"red","quantity":100}`, string(reqs[0].Body))
		require.Len(t, resp.Attempts[0].Checked, 1)
		assert.Equal(t, "clamp", resp.Attempts[0].Checked[0].Rule)
		assert.True(t, resp.Attempts[0].Checked[0].Lossy)
	})
	t.Run("strict without a rewriter", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 1000)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint), client.WithRewriter(nil), client.WithSchemaCheck(client.CheckStrict))
		_, err := c.Call(context.Background(), "paint", json.RawMessage(`{"color":"RED","quantity":5}`))
		ce := callError(t, err, client.ErrInvalidArguments)
		assert.Empty(t, srv.Requests())
		assert.Nil(t, ce.Proposal)
		assert.Contains(t, ce.Detail, "no rewriter")
	})
	t.Run("repair without a rewriter sends it", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 1000)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint), client.WithRewriter(nil))
		_, err := c.Call(context.Background(), "paint", json.RawMessage(`{"color":"RED","quantity":5}`))
		callError(t, err, client.ErrNotRetryable)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.JSONEq(t, `{"color":"RED","quantity":5}`, string(reqs[0].Body))
	})
}

// The server's facts win over the schema's. Its answer may contradict the schema it published:
// here the schema allows "red" and the server, newer, now spells its colors in capitals. The
// arguments the schema accepts are sent unchanged; the server's refusal names its own allowed
// values, and the retry sends what the server allows, not what the schema said.
func TestSchemaCheckServerFactsWin(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 422, `{"error":{"code":"invalid_body","message":"bad color","issues":[{"path":["color"],"code":"enum","allowed_values":["RED","GREEN"]}]}}`)
			return
		}
		reply(w, 201, `{"id":"p_1"}`)
	})
	c := newClient(t, srv, client.WithOperations(opPaint))
	resp, err := c.Call(context.Background(), "paint", json.RawMessage(`{"color":"red","quantity":5}`))
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.JSONEq(t, `{"color":"red","quantity":5}`, string(reqs[0].Body), "valid by the schema: sent as given")
	assert.JSONEq(t, `{"color":"RED","quantity":5}`, string(reqs[1].Body), "the server's allowed value, not the schema's")
	assert.Empty(t, resp.Attempts[0].Checked)
	assert.Equal(t, []string{"enum_match"}, rules(resp.Attempts[0].Changes))
}

// The check before sending repairs with rewrite.Default only, whatever the loop's Rewriter
// (no model is asked about a failure no server sent); the loop's Rewriter is asked after the
// server's failure, and sees the call's schema.
func TestSchemaReachesTheRewriter(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			reply(w, 400, `{"error":{"code":"invalid_body","message":"bad currency","issues":[{"path":["currency"],"code":"enum","allowed_values":["USD","EUR"]}]}}`)
			return
		}
		reply(w, 201, bodyOK)
	})
	var seen []rewrite.Request
	rw := rewrite.Func(func(ctx context.Context, r *rewrite.Request) (json.RawMessage, error) {
		seen = append(seen, *r)
		return rewrite.Default.Rewrite(ctx, r)
	})
	op := client.Operation{Name: "create_order", Path: "/v1/orders", Parameters: json.RawMessage(
		`{"type":"object","properties":{"currency":{"type":"string","enum":["usd","eur"]}}}`)}
	c := newClient(t, srv, client.WithOperations(op), client.WithRewriter(rw))
	resp, err := c.Call(context.Background(), "create_order", json.RawMessage(`{"currency":"USD "}`))
	require.NoError(t, err)
	// "USD " is repaired to "usd" before sending, by rewrite.Default; the server then refuses
	// "usd" anyway, and the loop's Rewriter is asked about that failure.
	assert.Equal(t, []string{"enum_match"}, rules(resp.Attempts[0].Checked))
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.JSONEq(t, `{"currency":"usd"}`, string(reqs[0].Body))
	require.Len(t, seen, 1, "the loop's Rewriter is not asked before sending")
	assert.Equal(t, 1, seen[0].Attempt)
	assert.Equal(t, "invalid_body", seen[0].Envelope.Code)
	assert.JSONEq(t, string(op.Parameters), string(seen[0].Schema))
}

// A repaired payload is not the caller's: the caller's own key stays with the caller's
// payload, and the repaired one goes under a key derived from it, the same each time the
// caller runs the call again with that key (so the server replays rather than repeats it).
// Without a caller's key, and with keys off, no caller's key goes with a changed payload.
func TestSchemaCheckIdempotencyKeys(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"color":"RED","quantity":5}`)
	t.Run("caller's key", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 100)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint))
		for range 2 {
			_, err := c.Call(context.Background(), "paint", args, client.WithIdempotencyKey("caller-key-1"))
			require.NoError(t, err)
		}
		// The valid payload keeps the caller's key.
		_, err := c.Call(context.Background(), "paint", json.RawMessage(`{"color":"red","quantity":5}`), client.WithIdempotencyKey("caller-key-1"))
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 3)
		assert.NotEqual(t, "caller-key-1", reqs[0].Key)
		assert.True(t, strings.HasPrefix(reqs[0].Key, "r-"), reqs[0].Key)
		assert.Equal(t, reqs[0].Key, reqs[1].Key, "the same repair of the same call, the same key")
		assert.Equal(t, "caller-key-1", reqs[2].Key)
	})
	t.Run("minted key", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 100)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint))
		resp, err := c.Call(context.Background(), "paint", args)
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.NotEmpty(t, reqs[0].Key)
		assert.Equal(t, reqs[0].Key, resp.Attempts[0].IdempotencyKey)
	})
	t.Run("keys off", func(t *testing.T) {
		t.Parallel()
		srv := newPaintServer(t, 100)
		c := newClient(t, srv.scripted, client.WithOperations(opPaint),
			client.WithIdempotencyKeys(client.KeysOff))
		_, err := c.Call(context.Background(), "paint", args, client.WithIdempotencyKey("caller-key-1"))
		require.NoError(t, err)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.Empty(t, reqs[0].Key, "the caller's key is for the caller's payload only")
	})
}

// Hooks see what the check changed, on the first attempt, and an attempt that starts with
// repaired arguments says so.
func TestSchemaCheckHooks(t *testing.T) {
	t.Parallel()
	srv := newPaintServer(t, 100)
	var ends []client.Attempt
	var rewritten []bool
	c := newClient(t, srv.scripted, client.WithOperations(opPaint),
		client.WithHooks(client.Hooks{
			AttemptStart: func(ctx context.Context, s *client.AttemptStart) context.Context {
				rewritten = append(rewritten, s.Rewritten)
				return ctx
			},
			AttemptEnd: func(_ context.Context, a *client.Attempt) { ends = append(ends, *a) },
		}))
	_, err := c.Call(context.Background(), "paint", json.RawMessage(`{"color":"Green","quantity":2}`))
	require.NoError(t, err)
	require.Len(t, ends, 1)
	require.Len(t, ends[0].Checked, 1)
	assert.Equal(t, rewrite.Change{Path: "/color", Old: json.RawMessage(`"Green"`), New: json.RawMessage(`"green"`),
		Rule: "enum_match", Why: ends[0].Checked[0].Why}, ends[0].Checked[0])
	assert.Equal(t, []bool{true}, rewritten)
}

// A call that carries a confirmation token is not checked: the server challenged these very
// arguments, and the token is good for them alone.
func TestSchemaCheckSkipsConfirmedCall(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 201, bodyOK) })
	c := newClient(t, srv, client.WithOperations(opPaint),
		client.WithSchemaCheck(client.CheckStrict))
	args := `{"color":"RED","quantity":5}`
	_, err := c.Call(context.Background(), "paint", json.RawMessage(args), client.WithConfirmationToken("tok_1"))
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.JSONEq(t, args, string(reqs[0].Body))
	assert.Equal(t, "tok_1", reqs[0].Token)
}

// WithSchemaCheck takes the three checks and refuses any other value.
func TestWithSchemaCheckValidates(t *testing.T) {
	t.Parallel()
	for _, s := range []client.SchemaCheck{client.CheckRepair, client.CheckStrict, client.CheckOff} {
		_, err := client.New(client.WithSchemaCheck(s))
		require.NoError(t, err, s.String())
	}
	_, err := client.New(client.WithSchemaCheck(client.SchemaCheck(7)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "check(7)")
	assert.Equal(t, "strict", client.CheckStrict.String())
}

// A schema the client cannot use — hostile or broken — never fails, panics or holds the call:
// the arguments go unchecked, as without a schema. The schemas that do compile but loop on
// themselves are checked, and end.
func TestSchemaCheckHostileSchemas(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"items":`, 5000) + `{}` + strings.Repeat(`}`, 5000)
	deepest := strings.Repeat(`{"items":`, 60) + `{}` + strings.Repeat(`}`, 60) // compiles
	huge := `{"type":"object","properties":{` + strings.Repeat(`"p":{"type":"string"},`, 20000) + `"q":{}}}`
	wide := `{"enum":[` + strings.Repeat(`"x",`, 50000) + `"y"]}`
	for _, tc := range []struct {
		name, schema string
	}{
		{"not JSON", `{"type":`},
		{"not a schema", `{"minimum":true}`},
		{"a number the validator cannot compute with", `{"type":"object","properties":{"quantity":{"maximum":1e999999999}}}`},
		{"a file reference", `{"$ref":"file:///etc/passwd"}`},
		{"a remote reference", `{"$ref":"http://127.0.0.1:1/schema.json"}`},
		{"an unknown meta-schema", `{"$schema":"http://127.0.0.1:1/meta","type":"object"}`},
		{"a pattern that does not compile", `{"properties":{"color":{"pattern":"(("}}}`},
		{"a reference to itself", `{"$ref":"#"}`},
		{"a cycle of references", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`},
		{"recursive properties", `{"properties":{"color":{"$ref":"#"}},"additionalProperties":{"$ref":"#"}}`},
		{"deep", deep},
		{"deep but compiles", deepest},
		{"huge", huge},
		{"a huge enum", wide},
		{"a string", `"schema"`},
		{"null", `null`},
		{"false", `false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 201, bodyOK) })
			op := opPaint
			op.Parameters = json.RawMessage(tc.schema)
			c := newClient(t, srv, client.WithOperations(op))
			args := `{"color":"RED","quantity":5,"deep":` + strings.Repeat(`[`, 60) + strings.Repeat(`]`, 60) + `}`
			_, err := c.Call(context.Background(), "paint", json.RawMessage(args))
			require.NoError(t, err)
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
		})
	}
}

// The schemas OperationsFromOpenAPI reads from an OpenAPI 3.0 document are checked as 3.0
// means them: nullable allows null, a boolean exclusiveMinimum makes minimum exclusive, and
// a format is a note, not a rule.
func TestSchemaCheckOpenAPI30(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/v1/notes":{"post":{
		"operationId":"note",
		"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Note"}}}},
		"responses":{"201":{"description":"ok"}}}}},
		"components":{"schemas":{"Note":{"type":"object","required":["text","count"],"additionalProperties":false,"properties":{
			"text":{"type":"string","nullable":true},
			"kind":{"type":"string","enum":["memo","todo"],"nullable":true},
			"email":{"type":"string","format":"email"},
			"count":{"type":"integer","minimum":0,"exclusiveMinimum":true}}}}}}`)
	ops, err := client.OperationsFromOpenAPI(doc)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, args string
		sent       bool
	}{
		{"nullable values", `{"text":null,"kind":null,"count":1}`, true},
		{"a format is not asserted", `{"text":"a","email":"not an address","count":1}`, true},
		{"an exclusive minimum", `{"text":"a","count":0}`, false},
		{"an unknown member", `{"text":"a","count":1,"color":"red"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 201, bodyOK) })
			c := newClient(t, srv, client.WithOperations(ops...),
				client.WithSchemaCheck(client.CheckStrict))
			_, err := c.Call(context.Background(), "note", json.RawMessage(tc.args))
			if tc.sent {
				require.NoError(t, err)
				assert.Len(t, srv.Requests(), 1)
				return
			}
			callError(t, err, client.ErrInvalidArguments)
			assert.Empty(t, srv.Requests())
		})
	}
}

// A next operation has no schema of its own: it runs as it always did, while the call that
// named it is checked.
func TestSchemaCheckNextOperationUnchecked(t *testing.T) {
	t.Parallel()
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/v1/paint" && n == 1 {
			reply(w, 409, `{"error":{"code":"precondition_failed","message":"prime first","retryable":true,"next_operation":"prime","next_operation_args":{"coat":"THICK"}}}`)
			return
		}
		reply(w, 201, bodyOK)
	})
	prime := client.Operation{Name: "prime", Path: "/v1/prime", Parameters: json.RawMessage(
		`{"type":"object","properties":{"coat":{"enum":["thick","thin"]}}}`)}
	c := newClient(t, srv, client.WithOperations(opPaint, prime))
	resp, err := c.Call(context.Background(), "paint", json.RawMessage(`{"color":"RED","quantity":5}`))
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.JSONEq(t, `{"coat":"THICK"}`, string(reqs[1].Body), "the server's next operation args, as it gave them")
	assert.JSONEq(t, `{"color":"red","quantity":5}`, string(reqs[2].Body))
	assert.Len(t, resp.Attempts[0].Checked, 1)
	for _, a := range resp.Attempts[1:] {
		assert.Empty(t, a.Checked)
	}
}

// The issues of the check before sending are written as the reference server writes its own:
// a JSON Pointer to the field at fault (the missing or unknown member itself), the keyword's
// code, the type name or the violated keyword as a fragment, the allowed values, what arrived;
// in path order, array indexes in numeric order.
func TestSchemaCheckIssues(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","required":["sku","lines"],"additionalProperties":false,"properties":{
		"sku":{"type":"string","maxLength":4},
		"price":{"type":"number","exclusiveMinimum":0.1},
		"kind":{"const":"retail"},
		"note":{"type":["string","null"]},
		"lines":{"type":"array","items":{"type":"object","properties":{"qty":{"type":"integer","minimum":1}}}}}}`
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 201, bodyOK) })
	op := client.Operation{Name: "order", Path: "/v1/orders", Parameters: json.RawMessage(schema)}
	c := newClient(t, srv, client.WithOperations(op), client.WithSchemaCheck(client.CheckStrict))
	lines := `[{"qty":1},{"qty":1},{"qty":0},{"qty":1},{"qty":1},{"qty":1},{"qty":1},{"qty":1},{"qty":1},{"qty":1},{"qty":"2"}]`
	_, err := c.Call(context.Background(), "order", json.RawMessage(
		`{"price":0.1,"kind":"shop","note":5,"extra":true,"lines":`+lines+`}`))
	callError(t, err, client.ErrInvalidArguments)
	var ae *client.ArgumentsError
	require.ErrorAs(t, err, &ae)
	type row struct{ Path, Code, Expected, Received, Allowed string }
	var got []row
	for _, is := range ae.Issues {
		allowed := ""
		if is.AllowedValues != nil {
			b, _ := json.Marshal(is.AllowedValues)
			allowed = string(b)
		}
		got = append(got, row{is.Path, is.Code, string(is.Expected), string(is.Received), allowed})
		assert.NotEmpty(t, is.Message, is.Path)
	}
	assert.Equal(t, []row{
		{"/extra", "additional_properties", "", "true", ""},
		{"/kind", "const", "", `"shop"`, `["retail"]`},
		{"/lines/2/qty", "minimum", `{"minimum":1}`, "0", ""},
		{"/lines/10/qty", "type", `"integer"`, `"2"`, ""},
		{"/note", "type", `"string"`, "5", ""},
		{"/price", "exclusive_minimum", `{"exclusiveMinimum":0.1}`, "0.1", ""},
		{"/sku", "required", "", "", ""},
	}, got)
	assert.Empty(t, srv.Requests())
}

// A schema that does not compile is said once per call in the Logger, at debug level, and the
// call goes on unchecked.
func TestSchemaCheckLogsAnUnusableSchema(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) { reply(w, 201, bodyOK) })
	// A schema on the client's disk that would refuse the arguments: read, it would stop the
	// call (strict). It is never read.
	file := filepath.Join(t.TempDir(), "schema.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"required":["size"]}`), 0o600))
	op := opPaint
	op.Parameters = json.RawMessage(`{"$ref":` + strconv.Quote("file://"+filepath.ToSlash(file)) + `}`)
	c := newClient(t, srv, client.WithOperations(op), client.WithLogger(lg), client.WithSchemaCheck(client.CheckStrict))
	_, err := c.Call(context.Background(), "paint", json.RawMessage(`{"color":"RED"}`))
	require.NoError(t, err)
	assert.Len(t, srv.Requests(), 1)
	assert.Contains(t, logged.String(), `level=DEBUG msg="remedy arguments not checked" operation=paint why="the schema does not compile`)
}
