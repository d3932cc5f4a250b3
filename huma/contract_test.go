package remedyhuma_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	remedyhuma "github.com/remedy-go/remedy/huma"
	"github.com/remedy-go/remedy/server"
)

type answer struct {
	status int
	header http.Header
	body   []byte
	env    *remedy.Envelope
}

func send(t *testing.T, method, url, body string, header map[string]string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, body: b}
	if env, ok := remedy.Parse(resp.StatusCode, resp.Header, b); ok {
		a.env = env
	}
	return a
}

// An invalid body is answered with remedy's envelope: the code, one issue per violation at
// its JSON Pointer (Huma says body.lines[0].quantity), and the violated subschema inline,
// its $refs to Huma's registry resolved.
func TestInvalidBodyIsAnEnvelope(t *testing.T) {
	url := serve(t, newBilling(), marked())
	a := send(t, "POST", url+"/v1/invoices", `{"customer_id":"cus_ada","currency":"usd","amount":5,"lines":[{"sku":"a","quantity":0},{"sku":"b","quantity":101}]}`, nil)
	if a.status != 422 || a.env == nil || a.env.Code != server.CodeInvalidBody || a.env.Dialect != remedy.DialectAgent {
		t.Fatalf("got %d %s", a.status, a.body)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var paths []string
	for _, is := range a.env.Issues {
		paths = append(paths, is.Path)
	}
	if strings.Join(paths, " ") != "/lines/0/quantity /lines/1/quantity" {
		t.Errorf("issues at %v", paths)
	}
	if a.env.Retryable || a.env.Hint == "" || a.env.TraceID == "" { // sent unchanged, it fails the same way
		t.Errorf("retryable %v, hint %q, trace id %q", a.env.Retryable, a.env.Hint, a.env.TraceID)
	}
	// The issues share /lines: its schema is the violated one, with the item type inline.
	var schema struct {
		Type     any `json:"type"`
		MaxItems int `json:"maxItems"`
		Items    struct {
			Properties map[string]struct {
				Minimum *float64 `json:"minimum"`
			} `json:"properties"`
		} `json:"items"`
	}
	if err := json.Unmarshal(a.env.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(schema.Type), "array") || schema.MaxItems != 20 || schema.Items.Properties["quantity"].Minimum == nil {
		t.Errorf("schema %s", a.env.Schema)
	}

	// A missing member points at the member, with its own schema.
	a = send(t, "POST", url+"/v1/invoices", `{"customer_id":"cus_ada","amount":5}`, nil)
	if a.env == nil || len(a.env.Issues) != 1 || a.env.Issues[0].Path != "/currency" || !bytes.Contains(a.env.Schema, []byte(`"enum"`)) {
		t.Errorf("missing member: %s", a.body)
	}

	// Parameters: 400 invalid_parameter, the parameter's schema.
	a = send(t, "GET", url+"/v1/reports?month=Jan", "", nil)
	if a.status != 400 || a.env.Code != server.CodeInvalidParameter || len(a.env.Issues) != 1 || a.env.Issues[0].Path != "/month" ||
		!bytes.Contains(a.env.Schema, []byte(`"pattern"`)) {
		t.Errorf("parameter: %d %s", a.status, a.body)
	}

	// Malformed JSON: 400 invalid_json; RFC 9457 when Accept asks for it.
	a = send(t, "POST", url+"/v1/invoices", `{"customer_id":`, map[string]string{"Accept": "application/problem+json"})
	if a.status != 400 || a.env == nil || a.env.Code != server.CodeInvalidJSON || a.header.Get("Content-Type") != remedy.ProblemContentType {
		t.Errorf("malformed: %d %s %s", a.status, a.header.Get("Content-Type"), a.body)
	}
}

// A handler's errors keep their meaning: Huma's 404 is not_found with the handler's message;
// a 503 says how long to wait; a handler's own *server.Problem is answered as it says; an
// unknown error is a 500 whose cause is not sent.
func TestHandlerErrors(t *testing.T) {
	var logged bytes.Buffer
	guard, err := server.NewGuard(server.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api, err := remedyhuma.Install(humago.New(mux, huma.DefaultConfig("T", "1")), remedyhuma.Options{Guard: guard})
	if err != nil {
		t.Fatal(err)
	}
	type in struct {
		Kind string `path:"kind"`
	}
	huma.Register(api, huma.Operation{OperationID: "fail", Method: "GET", Path: "/fail/{kind}"},
		func(ctx context.Context, i *in) (*struct{}, error) {
			switch i.Kind {
			case "missing":
				return nil, huma.Error404NotFound("no such thing")
			case "busy":
				return nil, huma.ErrorWithHeaders(huma.Error503ServiceUnavailable("rebuilding"), http.Header{"Retry-After": {"7"}})
			case "state":
				return nil, server.Precondition("the cart is not paid", "open", "paid", "pay_cart", map[string]string{"cart": "c1"})
			}
			return nil, io.ErrUnexpectedEOF
		})
	srv := startMux(t, mux)
	a := send(t, "GET", srv+"/fail/missing", "", nil)
	if a.status != 404 || a.env.Code != server.CodeNotFound || a.env.Message != "no such thing" {
		t.Errorf("404: %d %s", a.status, a.body)
	}
	a = send(t, "GET", srv+"/fail/busy", "", nil)
	if a.status != 503 || a.env.Code != server.CodeUnavailable || a.env.RetryAfter.Seconds() != 7 || a.header.Get("Retry-After") != "7" {
		t.Errorf("503: %d %v %s", a.status, a.header, a.body)
	}
	a = send(t, "GET", srv+"/fail/state", "", nil)
	if a.status != 409 || a.env.Code != server.CodePreconditionFailed || a.env.NextOperation != "pay_cart" {
		t.Errorf("precondition: %d %s", a.status, a.body)
	}
	a = send(t, "GET", srv+"/fail/other", "", nil)
	if a.status != 500 || a.env.Code != server.CodeInternalError || a.env.TraceID == "" || bytes.Contains(a.body, []byte("EOF")) {
		t.Errorf("500: %d %s", a.status, a.body)
	}
	if !strings.Contains(logged.String(), "unexpected EOF") || !strings.Contains(logged.String(), a.env.TraceID) {
		t.Errorf("the cause is not logged under the trace id: %s", logged.String())
	}
}

// A confirmed operation: a challenge first, the identical call with the token runs once, a
// token sent with another payload is refused and spent, a token used twice is refused.
func TestConfirmation(t *testing.T) {
	b := newBilling()
	mux := http.NewServeMux()
	api, err := remedyhuma.Install(humago.New(mux, huma.DefaultConfig("Billing", "1.0.0")), remedyhuma.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Marked in its metadata this time, rather than by id.
	huma.Register(api, remedyhuma.Confirm(huma.Operation{OperationID: "delete_customer", Method: http.MethodDelete,
		Path: "/v1/customers/{id}", DefaultStatus: http.StatusNoContent}),
		func(ctx context.Context, in *customerRef) (*struct{}, error) {
			b.deleted.Add(1)
			return nil, nil
		})
	url := startMux(t, mux)

	// An invalid call gets its validation error, not a token.
	a := send(t, "DELETE", url+"/v1/customers/BAD", "", nil)
	if a.status != 400 || a.env.Code != server.CodeInvalidParameter {
		t.Fatalf("invalid: %d %s", a.status, a.body)
	}
	a = send(t, "DELETE", url+"/v1/customers/cus_ada", "", nil)
	if a.status != 409 || a.env.Code != server.CodeConfirmationRequired || a.env.ConfirmationToken == "" {
		t.Fatalf("challenge: %d %s", a.status, a.body)
	}
	token := a.env.ConfirmationToken
	if b.deleted.Load() != 0 {
		t.Fatal("ran before confirmation")
	}
	// Another payload with the token: refused, and the token is spent.
	a = send(t, "DELETE", url+"/v1/customers/cus_bob", "", map[string]string{remedy.HeaderConfirmationToken: token})
	if a.status != 409 || a.env.Code != server.CodeConfirmationInvalid {
		t.Fatalf("another payload: %d %s", a.status, a.body)
	}
	a = send(t, "DELETE", url+"/v1/customers/cus_ada", "", map[string]string{remedy.HeaderConfirmationToken: token})
	if a.env == nil || a.env.Code != server.CodeConfirmationInvalid {
		t.Fatalf("the spent token: %d %s", a.status, a.body)
	}
	// A new challenge, confirmed: runs once; the token again: refused.
	token = send(t, "DELETE", url+"/v1/customers/cus_ada", "", nil).env.ConfirmationToken
	a = send(t, "DELETE", url+"/v1/customers/cus_ada", "", map[string]string{remedy.HeaderConfirmationToken: token})
	if a.status != 204 {
		t.Fatalf("confirmed: %d %s", a.status, a.body)
	}
	a = send(t, "DELETE", url+"/v1/customers/cus_ada", "", map[string]string{remedy.HeaderConfirmationToken: token})
	if a.status != 409 || a.env.Code != server.CodeConfirmationInvalid {
		t.Fatalf("reused: %d %s", a.status, a.body)
	}
	if got := b.deleted.Load(); got != 1 {
		t.Errorf("the handler ran %d times, want 1", got)
	}
}

// An idempotent POST runs once per key: its retry gets the stored result, identical and
// marked, without running the handler; another payload under the key is refused; a failure
// is not stored; keys are scoped by principal.
func TestIdempotency(t *testing.T) {
	b := newBilling()
	opts := marked()
	opts.Principal = func(ctx huma.Context) string { return ctx.Header("X-User") }
	url := serve(t, b, opts)
	body := `{"customer_id":"cus_ada","currency":"usd","amount":1200}`
	key := map[string]string{remedy.HeaderIdempotencyKey: "k1", "X-User": "ada"}

	first := send(t, "POST", url+"/v1/invoices", body, key)
	if first.status != 201 || first.header.Get(remedy.HeaderReplayed) != "" {
		t.Fatalf("first: %d %v %s", first.status, first.header, first.body)
	}
	again := send(t, "POST", url+"/v1/invoices", `{"amount":1200, "currency":"usd","customer_id":"cus_ada"}`, key)
	if again.status != 201 || !bytes.Equal(again.body, first.body) || again.header.Get(remedy.HeaderReplayed) != "true" {
		t.Fatalf("replay: %d %v %s", again.status, again.header, again.body)
	}
	if got := b.created.Load(); got != 1 {
		t.Fatalf("the handler ran %d times, want 1", got)
	}
	// Another principal's key of the same name is its own.
	other := send(t, "POST", url+"/v1/invoices", body, map[string]string{remedy.HeaderIdempotencyKey: "k1", "X-User": "bob"})
	if other.status != 201 || other.header.Get(remedy.HeaderReplayed) != "" || b.created.Load() != 2 {
		t.Fatalf("another principal: %d %v", other.status, other.header)
	}
	reused := send(t, "POST", url+"/v1/invoices", `{"customer_id":"cus_ada","currency":"usd","amount":1300}`, key)
	if reused.status != 422 || reused.env.Code != server.CodeIdempotencyKeyReused {
		t.Fatalf("reused: %d %s", reused.status, reused.body)
	}
	// A failure (Huma's validation, the handler's 404) releases its key.
	k2 := map[string]string{remedy.HeaderIdempotencyKey: "k2", "X-User": "ada"}
	if a := send(t, "POST", url+"/v1/invoices", `{"customer_id":"cus_nobody","currency":"usd","amount":1}`, k2); a.status != 404 {
		t.Fatalf("404: %d %s", a.status, a.body)
	}
	if a := send(t, "POST", url+"/v1/invoices", body, k2); a.status != 201 || a.header.Get(remedy.HeaderReplayed) != "" {
		t.Fatalf("after a failure: %d %v %s", a.status, a.header, a.body)
	}
	if got := b.created.Load(); got != 3 {
		t.Errorf("the handler ran %d times, want 3", got)
	}
}

// The OpenAPI document carries what remedy's client and kit read.
func TestOpenAPIExtensions(t *testing.T) {
	url := serve(t, newBilling(), marked())
	a := send(t, "GET", url+"/openapi.json", "", nil)
	ops, err := client.OperationsFromOpenAPI(a.body)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]client.KeySupport{}
	for _, op := range ops {
		keys[op.Name] = op.Keys
	}
	if keys["create_invoice"] != client.KeysHonoured {
		t.Errorf("create_invoice keys %v", keys["create_invoice"])
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Codes   []string `json:"x-agent-error-codes"`
			Confirm bool     `json:"x-confirmation-required"`
			Key     string   `json:"x-idempotency-key"`
		} `json:"paths"`
		Errors     map[string]any                   `json:"x-agent-errors"`
		Components struct{ Schemas map[string]any } `json:"components"`
	}
	if err := json.Unmarshal(a.body, &doc); err != nil {
		t.Fatal(err)
	}
	del := doc.Paths["/v1/customers/{id}"]["delete"]
	if !del.Confirm || !strings.Contains(strings.Join(del.Codes, ","), "confirmation_required") {
		t.Errorf("delete_customer: %+v", del)
	}
	if doc.Paths["/v1/invoices"]["post"].Key != "optional" {
		t.Errorf("create_invoice: %+v", doc.Paths["/v1/invoices"]["post"])
	}
	if doc.Errors["not_found"] == nil || doc.Components.Schemas["Envelope"] == nil {
		t.Errorf("catalog %v, schemas %v", doc.Errors, doc.Components.Schemas)
	}
}

// An unknown route is a 404 envelope; a known path with another method a 405 with Allow.
func TestFallback(t *testing.T) {
	url := serve(t, newBilling(), marked())
	a := send(t, "GET", url+"/v1/nothing", "", nil)
	if a.status != 404 || a.env == nil || a.env.Code != server.CodeNotFound {
		t.Errorf("404: %d %s", a.status, a.body)
	}
	a = send(t, "PATCH", url+"/v1/customers/cus_ada", "", nil)
	if a.status != 405 || a.env.Code != server.CodeMethodNotAllowed || a.header.Get("Allow") != "DELETE, GET" {
		t.Errorf("405: %d %v %s", a.status, a.header, a.body)
	}
}
