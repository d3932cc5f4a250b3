package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/termsafe"
)

// Codes of a confirmation a person gives (registered in builtinCodes).
const (
	// CodeConfirmationDeclined: the person asked to confirm the call (MCP elicitation)
	// declined it; nothing was done. Not retryable: the answer to the same call is no.
	CodeConfirmationDeclined = "confirmation_declined"
	// CodePersonRequired: the operation was registered with RequirePerson, and the call came
	// where the server cannot ask a person (REST, an MCP client without elicitation, a
	// stateless MCP endpoint with a client before protocol 2026-07-28). Not retryable.
	CodePersonRequired = "person_required"
)

// confirmInput is the id of the confirmation question among a tool result's input requests.
const confirmInput = "remedy.confirm"

// ApproveField is the one member of the form a confirmation question asks the person to fill
// in: a boolean, true to run the call as shown.
const ApproveField = "approve"

// maxShownArgs bounds the arguments a confirmation question shows, in bytes of canonical JSON:
// a form is read by a person. The binding covers the whole payload whatever is shown, and the
// question says when the arguments were cut.
const maxShownArgs = 4096

// asking is what a tool call tells the confirmation gate about asking a person, through the
// request's context: whether the client can be asked, and the answer when the call comes back
// with one. The gate leaves the question here for the tool handler to send.
type asking struct {
	can       bool              // the client declared form elicitation, and the server can reach it
	inResult  bool              // the question goes in the tool's result (protocol 2026-07-28 and later)
	unasked   bool              // the question could not be asked, or got no answer in time
	withdrawn bool              // unasked because the API shut down while it waited (Shutdown)
	rejected  bool              // the client answered with content that does not fit the question's form
	args      json.RawMessage   // the call's arguments, canonical and without protocol members
	answered  bool              // the call carries an answer to a question of ours
	answer    *mcp.ElicitResult // the answer (nil when the call's response is not one)
	state     string            // the request state echoed with the answer
	question  *mcp.ElicitParams // set by the gate: the question to send
	ask       string            // set by the gate: the request state to send with it
}

type askingKey struct{}

// askingOf is the asking of the exchange's request, or nil when it is not a tool call's.
func askingOf(x *exchange) *asking {
	if !x.tool || x.r == nil {
		return nil
	}
	a, _ := x.r.Context().Value(askingKey{}).(*asking)
	return a
}

// newAsking reads what a tool call says about asking a person: the client's capabilities and
// protocol version, and the answer it brings back.
func (a *API) newAsking(req *mcp.CallToolRequest, args json.RawMessage) *asking {
	s := &asking{can: a.canAsk(req), inResult: protocolOf(req) >= sessionlessVersion, args: shownArgs(args)}
	if req.Params != nil {
		if r, ok := req.Params.InputResponses[confirmInput]; ok {
			s.answered = true
			s.answer, _ = r.(*mcp.ElicitResult)
			s.state = req.Params.RequestState
		} else if req.Params.RequestState != "" && len(req.Params.InputResponses) > 0 {
			s.answered = true // responses to questions this server never asks
			s.state = req.Params.RequestState
		}
	}
	return s
}

// canAsk reports whether the server can ask the caller's user for a confirmation: the client
// declared form elicitation, and either speaks protocol 2026-07-28 or later (the question goes
// in the tool's result, as input requests, and the answer comes with the call sent again), or
// holds a session the server can send requests on (the server sends elicitation/create and
// runs the call again with the answer, see elicit). A stateless HTTP endpoint has no such
// session for older clients, and one that answers with JSON (MCPOptions.JSONResponse) has no
// stream to send the question on: there the server cannot ask.
func (a *API) canAsk(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	if e := caps.Elicitation; e.Form == nil && e.URL != nil {
		return false // URL mode only: no form to answer
	}
	if protocolOf(req) >= sessionlessVersion {
		return true
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || req.Extra == nil || req.Extra.Header == nil {
		return ok // another transport (stdio, in memory): the session can send requests
	}
	// Over the HTTP endpoint, a stateless request has no session to send on, and a JSON
	// response carries the call's result alone: the question would have nowhere to go.
	return ss.ID() != "" && !a.mcpConf.JSONResponse
}

// protocolOf is the protocol version of a tool call: its _meta's (2026-07-28 and later), or
// its session's.
func protocolOf(req *mcp.CallToolRequest) string {
	if req.Params != nil {
		if v, ok := req.Params.Meta[mcp.MetaKeyProtocolVersion].(string); ok && len(v) <= 32 {
			return v
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		if p := ss.InitializeParams(); p != nil {
			return p.ProtocolVersion
		}
	}
	return ""
}

// shownArgs is the arguments of a call as a question shows them: canonical JSON (members in
// order of name, numbers as written), without the confirmation token and the idempotency
// key, which are the protocol's and not the call's. Arguments that are not an object are
// shown as sent; the pipeline refuses them before any question. The question's _meta carries
// these bytes as they are; its text, escaped for a person (see question).
func shownArgs(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}")
	}
	v, err := decodeBody(t)
	if err != nil {
		return json.RawMessage(t)
	}
	if o, ok := v.(map[string]any); ok {
		delete(o, remedy.ArgConfirmationToken)
		delete(o, remedy.ArgIdempotencyKey)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return json.RawMessage(t)
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// askPerson stores the question about the exchange's call, bound as a token is (principal,
// operation, payload), under a state only the tool result carries, and leaves the question
// for the tool handler. The returned error ends the pipeline here, as a challenge does: the
// idempotency stage releases the key, and the answer comes with the call sent again.
func (x *exchange) askPerson(s *asking) error {
	cfg := &x.api.confirm
	state := newToken()
	if err := cfg.Store.PutChallenge(x.ctx, x.storeScope(), elicitID(state), x.binding(), cfg.TTL); err != nil {
		return x.storeFailure("storing a confirmation question", err)
	}
	s.question, s.ask = x.question(s.args), state
	x.obs.confirm = ConfirmationIssued
	return Error(CodeConfirmationRequired, x.op.ID+" needs confirmation: the server asks the client's user")
}

// question is the form that asks the person: what the operation is, the exact arguments (cut
// at maxShownArgs, saying so), and one boolean to approve. Its _meta carries the operation and
// the arguments under remedy.MetaConfirmation, exactly, for a client's policy to read.
//
// The text a person reads (the message, the field's description) shows the operation and the
// arguments through termsafe.String: a control, an escape sequence, a bidirectional control
// (U+202E, U+2066) or an invisible character in them is written as its escape (\x1b, \u202e,
// \u200b), so that what the person approves reads as what runs. encoding/json escapes only
// some of them (U+2028, U+2029, the C0 controls); the rest it writes as they are.
func (x *exchange) question(args json.RawMessage) *mcp.ElicitParams {
	op := x.op
	name := termsafe.String(op.ID)
	var b strings.Builder
	b.WriteString("Confirm this call? It runs only if you approve it, exactly as shown.\n\nOperation: ")
	b.WriteString(name)
	if op.Summary != "" {
		b.WriteString(" — ")
		b.WriteString(termsafe.String(op.Summary))
	}
	b.WriteString("\nArguments: ")
	if len(args) > maxShownArgs {
		b.WriteString(termsafe.String(string(args[:cutUTF8(args, maxShownArgs)])))
		b.WriteString("… (cut: " + strconv.Itoa(len(args)) + " bytes in all; the approval covers all of them)")
	} else {
		b.WriteString(termsafe.String(string(args)))
	}
	shown := args
	if len(args) > maxShownArgs {
		shown = nil
	}
	meta := map[string]any{"operation": op.ID}
	if shown != nil {
		meta["arguments"] = shown
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: b.String(),
		Meta:    mcp.Meta{remedy.MetaConfirmation: meta},
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				ApproveField: map[string]any{"type": "boolean", "title": "Approve",
					"description": "Run " + name + " with these arguments", "default": false},
			},
			"required": []string{ApproveField},
		},
	}
}

// cutUTF8 is the length of the longest prefix of b no longer than n that ends between two
// UTF-8 characters.
func cutUTF8(b []byte, n int) int {
	for n > 0 && n < len(b) && b[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

// answerOf takes the question the call's answer is to, and reads the answer: nil when the
// person approved this very call, else the refusal. The question is spent by its first
// answer, whatever it says; an answer to a question asked about other arguments, of another
// caller or operation, spent or expired, is refused as confirmation_invalid, and so is an
// accepted form that carries anything but approve (the arguments cannot be changed in the
// answer). A decline is confirmation_declined; a cancel (the person dismissed the question
// without deciding) is confirmation_required without a token: no answer, call again to ask
// again.
func (x *exchange) answerOf(s *asking) error {
	invalid := Error(CodeConfirmationInvalid, "the answer is not to a question this server asked this caller about this call "+
		"(the arguments changed since, the question was answered already or expired, or the answer is malformed); "+
		"nothing was done: send the call again, and the person is asked about it")
	if s.state == "" || len(s.state) > 256 || s.answer == nil {
		return invalid
	}
	cfg := &x.api.confirm
	if s.unasked {
		// No answer came (set by elicit, never by a client): the question is spent, and may
		// have expired while it waited.
		if _, _, err := cfg.Store.TakeChallenge(x.ctx, x.storeScope(), elicitID(s.state)); err != nil {
			return x.storeFailure("taking a confirmation question", err)
		}
		if s.withdrawn {
			p := Error(CodeUnavailable, "the server shut down while the person was asked to confirm "+x.op.ID+
				"; nothing was done: send the call again")
			p.RetryAfter = time.Second
			return p
		}
		p := Error(CodeConfirmationRequired, "the person could not be asked to confirm "+x.op.ID+
			" (the client failed to ask, or nobody answered within "+fmtDuration(cfg.TTL)+"); nothing was done: send the call again to ask again")
		p.Hint = askAgainHint
		return p
	}
	got, ok, err := cfg.Store.TakeChallenge(x.ctx, x.storeScope(), elicitID(s.state))
	switch {
	case err != nil:
		return x.storeFailure("taking a confirmation question", err)
	case !ok || subtle.ConstantTimeCompare(got, x.binding()) != 1:
		return invalid
	case s.rejected:
		p := Error(CodeConfirmationInvalid, "the client's answer to the question about "+x.op.ID+
			" does not fit the question's form (one boolean, "+ApproveField+"); nothing was done")
		p.Hint = askAgainHint
		return p
	}
	switch s.answer.Action {
	case "accept":
		c := s.answer.Content
		approve, isBool := c[ApproveField].(bool)
		if len(c) != 1 || !isBool {
			return invalid
		}
		if !approve {
			return x.declined()
		}
		x.obs.confirm = ConfirmationUsed
		return nil
	case "decline":
		return x.declined()
	case "cancel":
		p := Error(CodeConfirmationRequired, "the person asked to confirm "+x.op.ID+
			" did not answer (the question was dismissed); nothing was done: send the call again to ask again")
		p.Hint = askAgainHint
		return p
	}
	return invalid
}

// askAgainHint is the hint of a question that got no approving answer: the person is asked
// again, and no token is involved — the registry's hint for these codes speaks of the token
// flow, which an operation asked about this way may not accept at all (RequirePerson).
const askAgainHint = "Send the call again, unchanged and without a token, from a client that asks its user (MCP elicitation): the person is asked again."

// rejectedAnswer reports whether err is the go-sdk's refusal of a client's answer whose
// content does not match the question's requested schema (ServerSession.Elicit validates
// it, and says so only in its error's text, which TestElicitationRejectedForm pins).
func rejectedAnswer(err error) bool {
	return strings.Contains(err.Error(), "does not match requested schema")
}

func (x *exchange) declined() error {
	return Error(CodeConfirmationDeclined, "the person asked to confirm "+x.op.ID+" declined; nothing was done")
}

// elicitID is the store key of a question's state: its hash, under a prefix of its own, so
// that a state is never a token and a token never a state.
func elicitID(state string) string {
	h := sha256.Sum256([]byte(state))
	return "elicit:" + base64.RawURLEncoding.EncodeToString(h[:])
}

// personRequired refuses a call of a RequirePerson operation that came where no person can
// be asked.
func (x *exchange) personRequired(token bool) error {
	msg := x.op.ID + " needs a person's confirmation, and this call came where the server cannot ask one"
	if token {
		msg = x.op.ID + " needs a person's confirmation: no token confirms it"
	}
	return Error(CodePersonRequired, msg+"; call it over the MCP endpoint from a client that declares elicitation (form mode), which asks its user")
}

// elicit asks the question of s on the session of an older client (elicitation/create), and
// returns what the call runs again with: the answer, bound by the same state as an answer
// sent with the call by a client of 2026-07-28. The wait is bounded by the question's TTL: a
// question nobody answers in time, or that the client fails to ask (an error, a connection
// lost), is no answer, as a cancel is. One still waiting when stopping ends (API.Shutdown) is
// withdrawn.
func (s *asking) elicit(ctx context.Context, ss *mcp.ServerSession, ttl time.Duration, stopping context.Context) *asking {
	again := &asking{args: s.args, answered: true, state: s.ask}
	ectx, cancel := context.WithTimeout(ctx, ttl)
	defer cancel()
	// A question may wait for the confirmation's whole lifetime, far longer than a shutdown
	// can: the shutdown withdraws it rather than wait for a person.
	defer context.AfterFunc(stopping, cancel)()
	var err error
	if ss == nil {
		err = errors.New("no session")
	} else {
		again.answer, err = ss.Elicit(ectx, s.question)
	}
	switch {
	case err != nil && rejectedAnswer(err):
		// The client answered, with content the go-sdk refused against the question's own
		// form: an answer, and not one that approves.
		again.answer, again.rejected = &mcp.ElicitResult{Action: "accept"}, true
	case err != nil || again.answer == nil:
		again.answer, again.unasked = &mcp.ElicitResult{Action: "cancel"}, true
		again.withdrawn = stopping.Err() != nil
	}
	return again
}

// inputRequired is the tool result that asks the question s holds of a client of protocol
// 2026-07-28 or later: no content, the question among the input requests, the state to send
// back with the answer, with the call sent again.
func (s *asking) inputRequired() *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{confirmInput: s.question}, RequestState: s.ask}
}
