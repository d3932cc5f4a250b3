package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/termsafe"
	"github.com/remedy-go/remedy/server"
)

// personAPI serves delete_account (Confirm) and purge_account (RequirePerson) behind
// byBearer, counting executions and keeping the inputs they ran with.
type personAPI struct {
	srv  *httptest.Server
	runs atomic.Int64
	mu   sync.Mutex
	ran  []DeleteAccount
}

func newPersonAPI(t *testing.T, opts ...server.Option) *personAPI {
	t.Helper()
	p := &personAPI{}
	api, err := server.New(append([]server.Option{server.WithAuthenticator(byBearer)}, opts...)...)
	require.NoError(t, err)
	h := func(ctx context.Context, in DeleteAccount) (Deleted, error) {
		p.runs.Add(1)
		p.mu.Lock()
		p.ran = append(p.ran, in)
		p.mu.Unlock()
		return Deleted{ID: in.ID, Deleted: true}, nil
	}
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/delete", h, server.OperationID("delete_account"),
		server.Summary("Delete the account and all its data"), server.Confirm(), server.Idempotent()))
	require.NoError(t, server.Post(api, "/v1/accounts/{id}/purge", h, server.OperationID("purge_account"),
		server.Summary("Purge the account's backups"), server.RequirePerson()))
	p.srv = httptest.NewServer(api)
	t.Cleanup(p.srv.Close)
	return p
}

// person is a client's user as a test plays them: the answer to give, and the questions
// asked.
type person struct {
	mu     sync.Mutex
	answer func(*mcp.ElicitRequest) *mcp.ElicitResult
	asked  []*mcp.ElicitParams
}

func (p *person) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params)
	return p.answer(req), nil
}

func (p *person) questions() []*mcp.ElicitParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), p.asked...)
}

func answering(action string, content map[string]any) *person {
	return &person{answer: func(*mcp.ElicitRequest) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: action, Content: content}
	}}
}

// connectWith opens a go-sdk client session as principal, with opts.
func connectWith(t *testing.T, url, principal string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, h: http.Header{"Authorization": {"Bearer " + principal}}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

var acct = map[string]any{"id": "acct_1", "reason": "user asked"}

// TestElicitationAnswers: over a stateful session, a client that declares elicitation is
// asked instead of given a token — the form names the operation and shows the exact
// arguments — and the call runs within the same tools/call only when the person approves.
func TestElicitationAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		person *person
		runs   int64
		code   string // the refusal's, when it does not run
	}{
		{name: "accept", person: answering("accept", map[string]any{"approve": true}), runs: 1},
		{name: "accept unchecked", person: answering("accept", map[string]any{"approve": false}), code: "confirmation_declined"},
		{name: "decline", person: answering("decline", nil), code: "confirmation_declined"},
		{name: "cancel", person: answering("cancel", nil), code: "confirmation_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPersonAPI(t)
			cs := connectWith(t, p.srv.URL, "ann", &mcp.ClientOptions{ElicitationHandler: tc.person.handle})
			res := call(t, cs, "delete_account", acct)
			qs := tc.person.questions()
			require.Len(t, qs, 1, "the person is asked once")
			q := qs[0]
			assert.Contains(t, q.Message, "delete_account — Delete the account and all its data")
			assert.Contains(t, q.Message, `Arguments: {"id":"acct_1","reason":"user asked"}`, "the exact arguments, canonical")
			meta, _ := json.Marshal(q.Meta[remedy.MetaConfirmation])
			assert.JSONEq(t, `{"operation":"delete_account","arguments":{"id":"acct_1","reason":"user asked"}}`, string(meta))
			assert.Equal(t, tc.runs, p.runs.Load())
			if tc.code == "" {
				assert.Equal(t, Deleted{ID: "acct_1", Deleted: true}, result[Deleted](t, res))
				return
			}
			env := toolEnvelope(t, res)
			assert.Equal(t, tc.code, env.Code)
			assert.Empty(t, env.ConfirmationToken, "a person's question never turns into a token the model could replay")
			// Called again, a cancelled question is asked again; but only a person's answer
			// can make the call succeed, so no refusal tells a retrier to resend it by itself.
			assert.False(t, env.Retryable)
		})
	}
}

// TestElicitationWithoutCapability: a client that does not declare elicitation gets today's
// token flow, unchanged.
func TestElicitationWithoutCapability(t *testing.T) {
	t.Parallel()
	p := newPersonAPI(t)
	cs := connectWith(t, p.srv.URL, "ann", nil)
	env := toolEnvelope(t, call(t, cs, "delete_account", acct))
	require.Equal(t, "confirmation_required", env.Code)
	require.NotEmpty(t, env.ConfirmationToken)
	assert.Zero(t, p.runs.Load())
	args := map[string]any{"id": "acct_1", "reason": "user asked", "confirmationToken": env.ConfirmationToken}
	assert.Equal(t, Deleted{ID: "acct_1", Deleted: true}, result[Deleted](t, call(t, cs, "delete_account", args)))
	assert.Equal(t, int64(1), p.runs.Load())
}

// TestElicitationIdempotent: a retry of an approved call with its key is replayed, and the
// person is not asked again.
func TestElicitationIdempotent(t *testing.T) {
	t.Parallel()
	p := newPersonAPI(t)
	who := answering("accept", map[string]any{"approve": true})
	cs := connectWith(t, p.srv.URL, "ann", &mcp.ClientOptions{ElicitationHandler: who.handle})
	args := map[string]any{"id": "acct_1", "reason": "user asked", "idempotencyKey": "k1"}
	result[Deleted](t, call(t, cs, "delete_account", args))
	res := call(t, cs, "delete_account", args)
	assert.Equal(t, true, res.Meta[remedy.MetaReplayed])
	assert.Len(t, who.questions(), 1)
	assert.Equal(t, int64(1), p.runs.Load())
}

// TestRequirePerson: an operation only a person may confirm runs when the person approves over
// MCP elicitation, and is refused person_required everywhere else: over REST, with or without
// a token, and over MCP from a client without elicitation, which is offered no token argument.
func TestRequirePerson(t *testing.T) {
	t.Parallel()
	p := newPersonAPI(t)

	status, h, b := do(t, "POST", p.srv.URL+"/v1/accounts/acct_1/purge", "application/json", deleteBody, "Authorization", "Bearer ann")
	env := envelope(t, status, h, b)
	assert.Equal(t, 403, status)
	assert.Equal(t, "person_required", env.Code)
	assert.False(t, env.Retryable)
	assert.Empty(t, env.ConfirmationToken)
	assert.Contains(t, env.Message, "elicitation")

	// A token of another operation's challenge confirms nothing here.
	token := challenge(t, p.srv, "/v1/accounts/acct_1/delete", deleteBody, "ann")
	status, h, b = do(t, "POST", p.srv.URL+"/v1/accounts/acct_1/purge", "application/json", deleteBody,
		"Authorization", "Bearer ann", "X-Confirmation-Token", token)
	assert.Equal(t, "person_required", envelope(t, status, h, b).Code)

	plain := connectWith(t, p.srv.URL, "ann", nil)
	env = toolEnvelope(t, call(t, plain, "purge_account", acct))
	assert.Equal(t, "person_required", env.Code)
	tools, err := plain.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range tools.Tools {
		if tool.Name == "purge_account" {
			schema, _ := json.Marshal(tool.InputSchema)
			assert.NotContains(t, string(schema), "confirmationToken")
			assert.Contains(t, tool.Description, "A person must confirm")
			assert.Contains(t, tool.Description, "person_required")
		}
	}
	assert.Zero(t, p.runs.Load())

	who := answering("accept", map[string]any{"approve": true})
	asking := connectWith(t, p.srv.URL, "ann", &mcp.ClientOptions{ElicitationHandler: who.handle})
	assert.Equal(t, Deleted{ID: "acct_1", Deleted: true}, result[Deleted](t, call(t, asking, "purge_account", acct)))
	assert.Equal(t, int64(1), p.runs.Load())

	status, _, b = do(t, "GET", p.srv.URL+"/openapi.json", "", "")
	require.Equal(t, 200, status)
	var doc struct {
		Paths map[string]map[string]struct {
			Person     bool `json:"x-person-required"`
			Parameters []struct {
				Ref string `json:"$ref"`
			} `json:"parameters"`
			Description string `json:"description"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	purge := doc.Paths["/v1/accounts/{id}/purge"]["post"]
	assert.True(t, purge.Person)
	assert.Contains(t, purge.Description, "A person must confirm")
	for _, prm := range purge.Parameters {
		assert.NotContains(t, prm.Ref, "ConfirmationToken")
	}
	assert.False(t, doc.Paths["/v1/accounts/{id}/delete"]["post"].Person)
}

// rawAnswer sends a tools/call carrying an answer as a client of protocol 2026-07-28 sends
// one, without the SDK's own handling of input requests.
func rawAnswer(t *testing.T, cs *mcp.ClientSession, args any, state string, answer *mcp.ElicitResult) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_account", Arguments: args,
		InputResponses: mcp.InputResponseMap{"remedy.confirm": answer}, RequestState: state})
	require.NoError(t, err)
	return res
}

// TestElicitationBinding attacks the binding of a person's answer. On a stateless endpoint,
// a client of protocol 2026-07-28 gets the question in the tool's result (input requests and a
// request state) and sends the call again with the answer: the one moment the arguments can
// change between the question and the execution. The answer is refused when the arguments
// changed, when another caller sends it, when it is sent twice, when it tries to add members
// to the form, and when its state was never issued; nothing runs. The answer to the question
// about these very arguments runs them, once.
func TestElicitationBinding(t *testing.T) {
	t.Parallel()
	p := newPersonAPI(t, server.WithMCP(server.MCPOptions{Stateless: true}))
	noAuto := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}}
	ann := connectWith(t, p.srv.URL, "ann", noAuto)
	eve := connectWith(t, p.srv.URL, "eve", noAuto)
	approve := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}

	ask := func(cs *mcp.ClientSession) string {
		t.Helper()
		res := call(t, cs, "delete_account", acct)
		require.True(t, res.NeedsInput(), "the question comes in the result: %+v", res)
		q, ok := res.InputRequests["remedy.confirm"].(*mcp.ElicitParams)
		require.True(t, ok, "%+v", res.InputRequests)
		assert.Contains(t, q.Message, `{"id":"acct_1","reason":"user asked"}`)
		require.NotEmpty(t, res.RequestState)
		return res.RequestState
	}
	refused := func(res *mcp.CallToolResult, why string) {
		t.Helper()
		assert.Equal(t, "confirmation_invalid", toolEnvelope(t, res).Code, why)
		assert.Zero(t, p.runs.Load(), why)
	}

	state := ask(ann)
	other := map[string]any{"id": "acct_2", "reason": "user asked"}
	refused(rawAnswer(t, ann, other, state, approve), "approved for acct_1, sent for acct_2")
	refused(rawAnswer(t, ann, acct, state, approve), "the answer was spent by its first use")

	state = ask(ann)
	refused(rawAnswer(t, eve, acct, state, approve), "another caller's answer")

	state = ask(ann)
	refused(rawAnswer(t, ann, acct, state, &mcp.ElicitResult{Action: "accept",
		Content: map[string]any{"approve": true, "reason": "changed in the form"}}), "members the form did not ask for")

	refused(rawAnswer(t, ann, acct, "never-issued", approve), "a state the server never issued")
	refused(rawAnswer(t, ann, acct, "", approve), "no state")

	state = ask(ann)
	assert.Equal(t, Deleted{ID: "acct_1", Deleted: true}, result[Deleted](t, rawAnswer(t, ann, acct, state, approve)))
	assert.Equal(t, int64(1), p.runs.Load())
	p.mu.Lock()
	assert.Equal(t, []DeleteAccount{{ID: "acct_1", Reason: "user asked"}}, p.ran, "what ran is what was shown")
	p.mu.Unlock()
}

// TestElicitationStatefulForgery: on a stateful session the SDK asks the question itself and
// the client never sees the state; a call that brings an answer of its own is refused.
func TestElicitationStatefulForgery(t *testing.T) {
	t.Parallel()
	p := newPersonAPI(t)
	who := answering("accept", map[string]any{"approve": true})
	cs := connectWith(t, p.srv.URL, "ann", &mcp.ClientOptions{ElicitationHandler: who.handle,
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	res := rawAnswer(t, cs, acct, "guessed", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}})
	assert.Equal(t, "confirmation_invalid", toolEnvelope(t, res).Code)
	assert.Zero(t, p.runs.Load())
	assert.Empty(t, who.questions())
}

// TestElicitationStatelessOlderProtocol: a stateless endpoint cannot send requests, nor can
// one that answers with JSON, so a client of a protocol before 2026-07-28 that declares
// elicitation is never asked there: a Confirm operation gets the token flow, a RequirePerson
// one person_required.
func TestElicitationStatelessOlderProtocol(t *testing.T) {
	t.Parallel()
	for name, conf := range map[string]server.MCPOptions{"stateless": {Stateless: true}, "JSON responses": {JSONResponse: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testElicitationUnreachable(t, conf)
		})
	}
}

func testElicitationUnreachable(t *testing.T, conf server.MCPOptions) {
	p := newPersonAPI(t, server.WithMCP(conf))
	who := answering("accept", map[string]any{"approve": true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, h: http.Header{"Authorization": {"Bearer ann"}}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: who.handle}).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: p.srv.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	require.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)

	env := toolEnvelope(t, call(t, cs, "delete_account", acct))
	assert.Equal(t, "confirmation_required", env.Code)
	assert.NotEmpty(t, env.ConfirmationToken, "the token flow, unchanged")
	assert.Equal(t, "person_required", toolEnvelope(t, call(t, cs, "purge_account", acct)).Code)
	assert.Empty(t, who.questions())
	assert.Zero(t, p.runs.Load())
}

// TestElicitationLongArguments: arguments too long to show are cut in the question, which says
// so and how long they are, and are left out of its _meta; the approval still binds all of
// them.
func TestElicitationLongArguments(t *testing.T) {
	t.Parallel()
	p := newPersonAPI(t)
	who := answering("accept", map[string]any{"approve": true})
	cs := connectWith(t, p.srv.URL, "ann", &mcp.ClientOptions{ElicitationHandler: who.handle})
	long := map[string]any{"id": "acct_1", "reason": strings.Repeat("é", 3000)}
	result[Deleted](t, call(t, cs, "delete_account", long))
	qs := who.questions()
	require.Len(t, qs, 1)
	assert.Contains(t, qs[0].Message, "… (cut: 6027 bytes in all; the approval covers all of them)")
	assert.True(t, utf8.ValidString(qs[0].Message), "cut between characters")
	meta, _ := qs[0].Meta[remedy.MetaConfirmation].(map[string]any)
	assert.Equal(t, "delete_account", meta["operation"])
	assert.NotContains(t, meta, "arguments")
	assert.Equal(t, int64(1), p.runs.Load())
}

// TestElicitationNoAnswer: a question the client fails to ask (its handler errs) or that nobody
// answers within the confirmation TTL is no answer: confirmation_required without a token,
// nothing runs, and the call does not wait beyond the TTL.
func TestElicitationNoAnswer(t *testing.T) {
	t.Parallel()
	for name, silent := range map[string]bool{"the client fails": false, "nobody answers": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The person who never answers holds the handler until the test ends (released
			// before the session closes, which waits for it).
			release := make(chan struct{})
			handler := func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if silent {
					select {
					case <-ctx.Done():
					case <-release:
					}
				}
				return nil, errors.New("no dialog available")
			}
			// The TTL bounds the wait for an answer; the call's own context (call's ten seconds)
			// is far longer, so an answer to the call at all means the TTL ended the wait.
			p := newPersonAPI(t, server.WithConfirmation(server.ConfirmationOptions{TTL: 100 * time.Millisecond}))
			cs := connectWith(t, p.srv.URL, "ann", &mcp.ClientOptions{ElicitationHandler: handler})
			t.Cleanup(func() { close(release) })
			env := toolEnvelope(t, call(t, cs, "delete_account", acct))
			assert.Equal(t, "confirmation_required", env.Code)
			assert.Contains(t, env.Message, "could not be asked")
			assert.Empty(t, env.ConfirmationToken)
			assert.NotContains(t, env.Hint, remedy.HeaderConfirmationToken, "no token flow for a call the server asks a person about")
			assert.Zero(t, p.runs.Load())
		})
	}
}

// TestElicitationShowsHiddenCharacters attacks what the person reads: arguments holding a
// right-to-left override (U+202E), an isolate (U+2066), an escape sequence and zero-width
// characters, which a form or a terminal would render as something other than what runs.
// The question's text shows each as a visible escape — encoding/json writes U+202E, U+2066
// and U+200B as they are — while its _meta carries the arguments exactly, and the call runs
// with them exactly. The same holds when the arguments are too long and cut.
func TestElicitationShowsHiddenCharacters(t *testing.T) {
	t.Parallel()
	reason := "refund\u202e001$ ot\u2066 iso\u2069 \x1b[2Kzero\u200bwidth\u2060 line\u2028"
	for _, tc := range []struct {
		name string
		args map[string]any
		cut  bool
	}{
		{name: "shown whole", args: map[string]any{"id": "acct_\u202e1", "reason": reason}},
		{name: "cut", args: map[string]any{"id": "acct_\u202e1", "reason": reason + strings.Repeat("x", 5000)}, cut: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPersonAPI(t)
			who := answering("accept", map[string]any{"approve": true})
			cs := connectWith(t, p.srv.URL, "ann", &mcp.ClientOptions{ElicitationHandler: who.handle})
			result[Deleted](t, call(t, cs, "delete_account", tc.args))
			qs := who.questions()
			require.Len(t, qs, 1)
			q := qs[0]

			for _, hidden := range []string{"\u202e", "\u2066", "\u2069", "\x1b", "\u200b", "\u2060", "\u2028"} {
				assert.NotContains(t, q.Message, hidden, "the text a person reads holds no %q", hidden)
			}
			assert.True(t, termsafe.Safe(strings.ReplaceAll(q.Message, "\n", " ")), "%q", q.Message)
			assert.Contains(t, q.Message, `"id":"acct_\u202e1"`)
			assert.Contains(t, q.Message, `refund\u202e001$ ot\u2066 iso\u2069 \u001b[2Kzero\u200bwidth\u2060 line\u2028`,
				"each character as its escape: termsafe's, or encoding/json's where it escapes it already")
			desc, _ := json.Marshal(q.RequestedSchema)
			assert.True(t, termsafe.Safe(string(desc)))

			meta, _ := q.Meta[remedy.MetaConfirmation].(map[string]any)
			assert.Equal(t, "delete_account", meta["operation"])
			if tc.cut {
				assert.Contains(t, q.Message, "(cut: ")
				assert.NotContains(t, meta, "arguments")
			} else {
				var shown map[string]any
				b, err := json.Marshal(meta["arguments"])
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &shown))
				assert.Equal(t, tc.args, shown, "_meta carries the arguments exactly")
			}
			p.mu.Lock()
			assert.Equal(t, []DeleteAccount{{ID: tc.args["id"].(string), Reason: tc.args["reason"].(string)}}, p.ran, "what ran is what was sent")
			p.mu.Unlock()
		})
	}
}

// TestElicitationRejectedForm: a client that answers the question with a form of its own
// ({username, email}, which the go-sdk refuses against the question's schema) gave an answer,
// and not one that approves: confirmation_invalid, not retryable, nothing run — not "nobody
// answered" after a wait, and never a hint to send a token the operation may not accept
// (issue 35, row 12).
func TestElicitationRejectedForm(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"delete_account", "purge_account"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			p := newPersonAPI(t)
			who := answering("accept", map[string]any{"username": "ann", "email": "ann@example.com"})
			cs := connectWith(t, p.srv.URL, "ann", &mcp.ClientOptions{ElicitationHandler: who.handle})
			env := toolEnvelope(t, call(t, cs, op, acct))
			assert.Equal(t, "confirmation_invalid", env.Code)
			assert.False(t, env.Retryable)
			assert.Contains(t, env.Message, "does not fit the question's form")
			assert.Empty(t, env.ConfirmationToken)
			assert.NotContains(t, env.Hint, remedy.HeaderConfirmationToken)
			assert.NotContains(t, env.Hint, "with "+remedy.ArgConfirmationToken)
			assert.Len(t, who.questions(), 1, "the person was asked")
			assert.Zero(t, p.runs.Load())
		})
	}
}
