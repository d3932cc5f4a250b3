package remedyhuma_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/remedy-go/remedy"
	remedyhuma "github.com/remedy-go/remedy/huma"
	"github.com/remedy-go/remedy/server"
)

// closing is the body of the confirmed operations below: an account to close, and why.
type closing struct {
	Account string `json:"account" pattern:"^acc_[a-z0-9]+$"`
	Reason  string `json:"reason" minLength:"3"`
}

// tenantKey is the key of a value an app's middleware puts in the request's context for its
// resolvers to read.
type tenantKey struct{}

// closeIn has a Resolver that reads the request's context and finds nothing wrong.
type closeIn struct {
	Body   closing
	tenant string
}

func (in *closeIn) Resolve(ctx huma.Context) []error {
	in.tenant, _ = ctx.Context().Value(tenantKey{}).(string)
	return nil
}

// lockedIn has a Resolver that reads the request's context and refuses, at the field, a
// locked account: what a schema cannot say.
type lockedIn struct{ Body closing }

func (in *lockedIn) Resolve(ctx huma.Context) []error {
	if ctx.Context().Err() != nil {
		return []error{huma.Error503ServiceUnavailable("the request was cancelled")}
	}
	if in.Body.Account == "acc_locked" {
		return []error{&huma.ErrorDetail{Location: "body.account", Message: "the account is locked", Value: in.Body.Account}}
	}
	return nil
}

// countingStore is a real MemoryStore that counts the challenges put in it: a token is issued
// exactly when one is.
type countingStore struct {
	*server.MemoryStore
	issued atomic.Int64
}

func (s *countingStore) PutChallenge(ctx context.Context, scope, id string, binding []byte, ttl time.Duration) error {
	s.issued.Add(1)
	return s.MemoryStore.PutChallenge(ctx, scope, id, binding, ttl)
}

// The confirmation gate runs after Huma's resolvers and validation have all passed, even when
// a resolver reads the request's context before the handler does: an invalid call (by the
// schema, or by a resolver's own error) gets Huma's 422 at its field, no token is issued, and
// the handler does not run; a valid call gets a token, and the confirmed call runs once.
func TestConfirmationAfterResolvers(t *testing.T) {
	store := &countingStore{MemoryStore: server.NewMemoryStore(server.MemoryOptions{})}
	guard, err := server.NewGuard(server.WithConfirmation(server.ConfirmationOptions{Store: store}))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("Accounts", "1.0.0"))
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		next(huma.WithValue(ctx, tenantKey{}, "acme"))
	})
	api, err = remedyhuma.Install(api, remedyhuma.Options{Guard: guard})
	if err != nil {
		t.Fatal(err)
	}
	var closed, unlocked atomic.Int64
	var mu sync.Mutex
	var tenants []string
	huma.Register(api, remedyhuma.Confirm(huma.Operation{OperationID: "close_account", Method: http.MethodPost,
		Path: "/v1/accounts/close"}),
		func(ctx context.Context, in *closeIn) (*struct{}, error) {
			mu.Lock()
			tenants = append(tenants, in.tenant)
			mu.Unlock()
			closed.Add(1)
			return nil, nil
		})
	huma.Register(api, remedyhuma.Confirm(huma.Operation{OperationID: "unlock_account", Method: http.MethodPost,
		Path: "/v1/accounts/unlock"}),
		func(ctx context.Context, in *lockedIn) (*struct{}, error) {
			unlocked.Add(1)
			return nil, nil
		})
	url := startMux(t, mux)

	invalid := []struct {
		name, path, body, field string
	}{
		{"schema, resolver reads the context", "/v1/accounts/close", `{"account":"acc_1","reason":"no"}`, "/reason"},
		{"schema, resolver refuses", "/v1/accounts/unlock", `{"account":"ACC","reason":"moved away"}`, "/account"},
		{"resolver refuses", "/v1/accounts/unlock", `{"account":"acc_locked","reason":"moved away"}`, "/account"},
	}
	for _, c := range invalid {
		a := send(t, "POST", url+c.path, c.body, nil)
		if a.status != 422 || a.env == nil || a.env.Code != server.CodeInvalidBody || a.env.ConfirmationToken != "" {
			t.Errorf("%s: got %d %s, want 422 %s without a token", c.name, a.status, a.body, server.CodeInvalidBody)
			continue
		}
		if len(a.env.Issues) != 1 || a.env.Issues[0].Path != c.field {
			t.Errorf("%s: issues %+v, want one at %s", c.name, a.env.Issues, c.field)
		}
	}
	if n := store.issued.Load(); n != 0 {
		t.Errorf("%d tokens issued for invalid calls", n)
	}
	if closed.Load() != 0 || unlocked.Load() != 0 {
		t.Fatalf("a handler ran for an invalid call: close %d, unlock %d", closed.Load(), unlocked.Load())
	}

	// Valid calls: a token, then the confirmed call runs once, with what its resolver read.
	for _, c := range []struct {
		path string
		ran  *atomic.Int64
	}{{"/v1/accounts/close", &closed}, {"/v1/accounts/unlock", &unlocked}} {
		body := `{"account":"acc_1","reason":"moved away"}`
		a := send(t, "POST", url+c.path, body, nil)
		if a.status != 409 || a.env == nil || a.env.Code != server.CodeConfirmationRequired || a.env.ConfirmationToken == "" {
			t.Fatalf("%s: challenge %d %s", c.path, a.status, a.body)
		}
		if c.ran.Load() != 0 {
			t.Fatalf("%s ran before confirmation", c.path)
		}
		token := map[string]string{remedy.HeaderConfirmationToken: a.env.ConfirmationToken}
		if a = send(t, "POST", url+c.path, body, token); a.status != 204 {
			t.Fatalf("%s: confirmed %d %s", c.path, a.status, a.body)
		}
		if a = send(t, "POST", url+c.path, body, token); a.status != 409 || a.env == nil || a.env.Code != server.CodeConfirmationInvalid {
			t.Fatalf("%s: the token again %d %s", c.path, a.status, a.body)
		}
		if n := c.ran.Load(); n != 1 {
			t.Errorf("%s ran %d times, want 1", c.path, n)
		}
	}
	if n := store.issued.Load(); n != 2 {
		t.Errorf("%d tokens issued, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tenants) != 1 || tenants[0] != "acme" {
		t.Errorf("the resolver read tenants %v, want [acme]", tenants)
	}
}

// A middleware the app puts after the gate (by a modifier of the API Install returns) that
// reads the context is not taken for a resolver: the gate runs there, before Huma's
// validation, rather than never, so that the handler never runs unconfirmed.
func TestConfirmationMiddlewareAfterGate(t *testing.T) {
	mux := http.NewServeMux()
	api, err := remedyhuma.Install(humago.New(mux, huma.DefaultConfig("Accounts", "1.0.0")), remedyhuma.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api.(*huma.Group).UseModifier(func(op *huma.Operation, next func(*huma.Operation)) {
		op.Middlewares = append(op.Middlewares, func(ctx huma.Context, next func(huma.Context)) {
			next(huma.WithValue(ctx, tenantKey{}, "acme"))
		})
		next(op)
	})
	var closed atomic.Int64
	huma.Register(api, remedyhuma.Confirm(huma.Operation{OperationID: "close_account", Method: http.MethodPost,
		Path: "/v1/accounts/close"}),
		func(ctx context.Context, in *closeIn) (*struct{}, error) {
			closed.Add(1)
			return nil, nil
		})
	url := startMux(t, mux)

	body := `{"account":"acc_1","reason":"moved away"}`
	a := send(t, "POST", url+"/v1/accounts/close", body, nil)
	if a.status != 409 || a.env == nil || a.env.Code != server.CodeConfirmationRequired || a.env.ConfirmationToken == "" {
		t.Fatalf("challenge: %d %s", a.status, a.body)
	}
	if closed.Load() != 0 {
		t.Fatal("ran before confirmation")
	}
	a = send(t, "POST", url+"/v1/accounts/close", body, map[string]string{remedy.HeaderConfirmationToken: a.env.ConfirmationToken})
	if a.status != 204 || closed.Load() != 1 {
		t.Fatalf("confirmed: %d %s, ran %d times", a.status, a.body, closed.Load())
	}
}

// When writing Huma's refusal fails because the caller has gone (Huma then reads the context
// to tell), the refused call gets no token either.
func TestConfirmationNotAfterRefusal(t *testing.T) {
	store := &countingStore{MemoryStore: server.NewMemoryStore(server.MemoryOptions{})}
	guard, err := server.NewGuard(server.WithConfirmation(server.ConfirmationOptions{Store: store}))
	if err != nil {
		t.Fatal(err)
	}
	cfg := huma.DefaultConfig("Accounts", "1.0.0")
	gone := errors.New("the caller has gone")
	cfg.Formats = map[string]huma.Format{"application/json": {
		Marshal:   func(io.Writer, any) error { return gone },
		Unmarshal: json.Unmarshal,
	}}
	mux := http.NewServeMux()
	api := humago.New(mux, cfg)
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		c, cancel := context.WithCancel(ctx.Context())
		cancel()
		next(huma.WithContext(ctx, c))
	})
	api, err = remedyhuma.Install(api, remedyhuma.Options{Guard: guard})
	if err != nil {
		t.Fatal(err)
	}
	var closed atomic.Int64
	huma.Register(api, remedyhuma.Confirm(huma.Operation{OperationID: "close_account", Method: http.MethodPost,
		Path: "/v1/accounts/close"}),
		func(ctx context.Context, in *closeIn) (*struct{}, error) {
			closed.Add(1)
			return nil, nil
		})
	url := startMux(t, mux)

	a := send(t, "POST", url+"/v1/accounts/close", `{"account":"acc_1","reason":"no"}`, nil)
	if a.status != 422 {
		t.Errorf("got %d %s, want Huma's 422", a.status, a.body)
	}
	if n := store.issued.Load(); n != 0 || closed.Load() != 0 {
		t.Errorf("%d tokens issued, the handler ran %d times, for a refused call", n, closed.Load())
	}
}
