package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

// The order API the tests run against.

type Item struct {
	SKU      string `json:"sku" schema:"minLength=1"`
	Quantity int    `json:"quantity" schema:"minimum=1;maximum=100"`
}

type CreateOrder struct {
	CustomerID string `json:"customer_id" schema:"pattern=^cus_[a-z0-9]+$"`
	Currency   string `json:"currency" schema:"enum=usd,eur,gbp"`
	Items      []Item `json:"items" schema:"minItems=1"`
	Note       string `json:"note,omitempty" schema:"maxLength=20"`
}

type Order struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Currency string `json:"currency"`
	Items    []Item `json:"items"`
}

type GetOrder struct {
	ID     string `path:"id" schema:"pattern=^ord_"`
	Expand bool   `query:"expand,omitempty"`
}

type ListOrders struct {
	Limit  *int     `query:"limit" schema:"minimum=1;maximum=50"`
	Status []string `query:"status" schema:"enum=created,shipped"`
}

type OrderList struct {
	Orders []Order `json:"orders"`
	Limit  int     `json:"limit"`
}

type ShipOrder struct {
	ID string `path:"id"`
}

type Fail struct {
	Code string `json:"code"`
}

// logSink collects what the API logs.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// newOrderAPI is the order API over loopback.
func newOrderAPI(t testing.TB, opts ...server.Option) (*httptest.Server, *logSink) {
	t.Helper()
	logs := &logSink{}
	opts = append([]server.Option{server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil)))}, opts...)
	api, err := server.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	orders := map[string]Order{}
	require.NoError(t, server.Post(api, "/v1/orders", func(ctx context.Context, in CreateOrder) (Order, error) {
		mu.Lock()
		defer mu.Unlock()
		o := Order{ID: "ord_" + string(rune('a'+len(orders))), Status: "created", Currency: in.Currency, Items: in.Items}
		orders[o.ID] = o
		return o, nil
	}, server.OperationID("create_order"), server.Summary("Create an order"), server.SuccessStatus(201)))
	require.NoError(t, server.Get(api, "/v1/orders/{id}", func(ctx context.Context, in GetOrder) (Order, error) {
		mu.Lock()
		defer mu.Unlock()
		o, ok := orders[in.ID]
		if !ok {
			return Order{}, server.Error(server.CodeNotFound, "no order "+in.ID)
		}
		return o, nil
	}, server.OperationID("get_order"), server.Errors(server.CodeNotFound)))
	require.NoError(t, server.Get(api, "/v1/orders", func(ctx context.Context, in ListOrders) (OrderList, error) {
		l := OrderList{Limit: 10}
		if in.Limit != nil {
			l.Limit = *in.Limit
		}
		return l, nil
	}, server.OperationID("list_orders")))
	require.NoError(t, server.Post(api, "/v1/orders/{id}/ship", func(ctx context.Context, in ShipOrder) (Order, error) {
		mu.Lock()
		defer mu.Unlock()
		o, ok := orders[in.ID]
		switch {
		case !ok:
			return Order{}, server.Error(server.CodeNotFound, "no order "+in.ID)
		case o.Status != "paid":
			return Order{}, server.Precondition("the order is not paid", o.Status, "paid", "pay_order", map[string]string{"id": in.ID})
		}
		o.Status = "shipped"
		orders[in.ID] = o
		return o, nil
	}, server.OperationID("ship_order"), server.Errors(server.CodeNotFound, server.CodePreconditionFailed)))
	require.NoError(t, server.Post(api, "/v1/orders/{id}/pay", func(ctx context.Context, in ShipOrder) (Order, error) {
		mu.Lock()
		defer mu.Unlock()
		o, ok := orders[in.ID]
		if !ok {
			return Order{}, server.Error(server.CodeNotFound, "no order "+in.ID)
		}
		o.Status = "paid"
		orders[in.ID] = o
		return o, nil
	}, server.OperationID("pay_order"), server.Errors(server.CodeNotFound)))
	require.NoError(t, server.Post(api, "/v1/fail", func(ctx context.Context, in Fail) (struct{}, error) {
		switch in.Code {
		case "panic":
			panic("secret panic value /etc/passwd")
		case "plain":
			return struct{}{}, errors.New("pq: password authentication failed for user \"admin\"")
		case "unregistered":
			return struct{}{}, server.Error("no_such_code", "whatever")
		case "envelope":
			return struct{}{}, &remedy.Envelope{Status: 423, Code: "order_locked", Message: "the order is being edited",
				Retryable: true, RetryAfter: 1500 * time.Millisecond, Category: remedy.CategoryState}
		case "not a failure":
			return struct{}{}, &remedy.Envelope{Status: 200, Code: "fine", Message: "internal detail 42"}
		}
		return struct{}{}, server.Error(in.Code, "failed on purpose")
	}, server.OperationID("fail")))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv, logs
}

// do sends a request and returns the status, headers and body.
func do(t testing.TB, method, url, contentType, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// envelope parses a failure the way any remedy client reads it.
func envelope(t testing.TB, status int, h http.Header, body []byte) *remedy.Envelope {
	t.Helper()
	env, ok := remedy.Parse(status, h, body)
	require.True(t, ok, "not a failure: %d %s", status, body)
	return env
}

func TestCreateOrderSucceeds(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)
	status, h, body := do(t, "POST", srv.URL+"/v1/orders", "application/json",
		`{"customer_id":"cus_1","currency":"usd","items":[{"sku":"a","quantity":2}]}`)
	require.Equal(t, 201, status, "%s", body)
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	var o Order
	require.NoError(t, json.Unmarshal(body, &o))
	assert.Equal(t, "created", o.Status)
	assert.Equal(t, []Item{{SKU: "a", Quantity: 2}}, o.Items)

	status, _, body = do(t, "GET", srv.URL+"/v1/orders/"+o.ID+"?expand=true", "", "")
	require.Equal(t, 200, status, "%s", body)
}

func TestRouting(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)

	t.Run("unknown path names the closest operations", func(t *testing.T) {
		status, h, body := do(t, "POST", srv.URL+"/v1/order", "application/json", `{}`)
		env := envelope(t, status, h, body)
		assert.Equal(t, 404, env.Status)
		assert.Equal(t, "not_found", env.Code)
		require.NotEmpty(t, env.Suggestions)
		assert.Equal(t, "POST /v1/orders (create_order)", env.Suggestions[0])
		assert.False(t, env.Retryable)
	})
	t.Run("a typo in a parameterized path", func(t *testing.T) {
		status, h, body := do(t, "GET", srv.URL+"/v1/ordres/ord_a", "", "")
		env := envelope(t, status, h, body)
		assert.Equal(t, "not_found", env.Code)
		require.NotEmpty(t, env.Suggestions)
		assert.Equal(t, "GET /v1/orders/{id} (get_order)", env.Suggestions[0])
	})
	t.Run("wrong method gets 405 with Allow", func(t *testing.T) {
		status, h, body := do(t, "DELETE", srv.URL+"/v1/orders", "", "")
		env := envelope(t, status, h, body)
		assert.Equal(t, 405, status)
		assert.Equal(t, "method_not_allowed", env.Code)
		assert.Equal(t, "GET, POST", h.Get("Allow"))
		assert.Contains(t, env.Suggestions, "POST /v1/orders (create_order)")
	})
	t.Run("a literal beats a parameter", func(t *testing.T) {
		status, _, body := do(t, "POST", srv.URL+"/v1/orders/ord_zz/pay", "", "")
		env := envelope(t, status, nil, body)
		assert.Equal(t, "not_found", env.Code)
		assert.Equal(t, "no order ord_zz", env.Message)
	})
	t.Run("an escaped slash stays in its parameter, which is refused", func(t *testing.T) {
		// The route matches (no 404): the parameter holds the slash, and a handler that
		// joined it into a file path or a key would read it as two segments, so it never
		// gets it.
		status, _, body := do(t, "GET", srv.URL+"/v1/orders/ord_a%2Fb", "", "")
		env := envelope(t, status, nil, body)
		assert.Equal(t, 400, status)
		assert.Equal(t, "invalid_parameter", env.Code)
		require.Len(t, env.Issues, 1)
		assert.Equal(t, "/id", env.Issues[0].Path)
		assert.Equal(t, "invalid_path_segment", env.Issues[0].Code)
	})
}

func TestBodyErrors(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)
	small, _ := newOrderAPI(t, server.WithMaxBody(64))

	t.Run("malformed JSON gets the byte offset", func(t *testing.T) {
		status, h, body := do(t, "POST", srv.URL+"/v1/orders", "application/json", "{\"currency\":\"usd\",\n \"items\": [}")
		env := envelope(t, status, h, body)
		assert.Equal(t, 400, status)
		assert.Equal(t, "invalid_json", env.Code)
		assert.Contains(t, env.Message, "byte 30 (line 2, column 12)")
		assert.Contains(t, env.Message, "unexpected '}'")
	})
	t.Run("trailing data", func(t *testing.T) {
		status, _, body := do(t, "POST", srv.URL+"/v1/orders", "application/json", `{} {}`)
		env := envelope(t, status, nil, body)
		assert.Equal(t, "invalid_json", env.Code)
		assert.Contains(t, env.Message, "more data after the JSON value")
	})
	t.Run("truncated", func(t *testing.T) {
		status, _, body := do(t, "POST", srv.URL+"/v1/orders", "application/json", `{"currency":`)
		env := envelope(t, status, nil, body)
		assert.Equal(t, "invalid_json", env.Code)
		assert.Contains(t, env.Message, "unexpected end of the body")
	})
	t.Run("wrong content type gets 415", func(t *testing.T) {
		status, _, body := do(t, "POST", srv.URL+"/v1/orders", "text/plain", `{"currency":"usd"}`)
		env := envelope(t, status, nil, body)
		assert.Equal(t, 415, status)
		assert.Equal(t, "unsupported_media_type", env.Code)
	})
	t.Run("a +json type is JSON", func(t *testing.T) {
		status, _, body := do(t, "POST", srv.URL+"/v1/orders", "application/merge-patch+json; charset=utf-8",
			`{"customer_id":"cus_1","currency":"usd","items":[{"sku":"a","quantity":1}]}`)
		assert.Equal(t, 201, status, "%s", body)
	})
	t.Run("over the limit gets 413", func(t *testing.T) {
		big := `{"customer_id":"cus_1","currency":"usd","note":"` + strings.Repeat("x", 100) + `"}`
		status, _, body := do(t, "POST", small.URL+"/v1/orders", "application/json", big)
		env := envelope(t, status, nil, body)
		assert.Equal(t, 413, status)
		assert.Equal(t, "payload_too_large", env.Code)
	})
	t.Run("over the limit without a declared length", func(t *testing.T) {
		big := `{"note":"` + strings.Repeat("x", 100) + `"}`
		req, _ := http.NewRequest("POST", small.URL+"/v1/orders", io.MultiReader(strings.NewReader(big)))
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = -1
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		env := envelope(t, resp.StatusCode, resp.Header, b)
		assert.Equal(t, "payload_too_large", env.Code)
	})
}

func TestInternalErrorsLeakNothing(t *testing.T) {
	t.Parallel()
	srv, logs := newOrderAPI(t)
	for _, c := range []struct{ code, secret string }{
		{"panic", "secret panic value"},
		{"plain", "password authentication failed"},
		{"unregistered", "no_such_code"},
		{"not a failure", "internal detail 42"},
	} {
		t.Run(c.code, func(t *testing.T) {
			status, h, body := do(t, "POST", srv.URL+"/v1/fail", "application/json", `{"code":"`+c.code+`"}`)
			env := envelope(t, status, h, body)
			assert.Equal(t, 500, status)
			assert.Equal(t, "internal_error", env.Code)
			assert.Regexp(t, `^[0-9a-f]{32}$`, env.TraceID)
			for _, leak := range []string{c.secret, "goroutine", ".go:", "panic", "pq:"} {
				assert.NotContains(t, string(body), leak)
			}
			// The real cause is in the log, under the same trace id.
			assert.Contains(t, logs.String(), env.TraceID)
			assert.Contains(t, logs.String(), c.secret)
		})
	}
	t.Run("trace id from traceparent", func(t *testing.T) {
		tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		status, h, body := do(t, "POST", srv.URL+"/v1/fail", "application/json", `{"code":"plain"}`, "Traceparent", tp)
		env := envelope(t, status, h, body)
		assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", env.TraceID)
	})
	t.Run("a malformed traceparent is not echoed", func(t *testing.T) {
		tp := "00-<script>alert(1)</script>0000000000000-00f067aa0ba902b7-01"
		status, h, body := do(t, "POST", srv.URL+"/v1/fail", "application/json", `{"code":"plain"}`, "Traceparent", tp)
		env := envelope(t, status, h, body)
		assert.Regexp(t, `^[0-9a-f]{32}$`, env.TraceID)
		assert.NotContains(t, string(body), "script")
	})
}

func TestPreconditionNamesTheNextOperation(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)
	_, _, body := do(t, "POST", srv.URL+"/v1/orders", "application/json",
		`{"customer_id":"cus_1","currency":"usd","items":[{"sku":"a","quantity":1}]}`)
	var o Order
	require.NoError(t, json.Unmarshal(body, &o))
	status, h, body := do(t, "POST", srv.URL+"/v1/orders/"+o.ID+"/ship", "", "")
	env := envelope(t, status, h, body)
	assert.Equal(t, 409, status)
	assert.Equal(t, "precondition_failed", env.Code)
	assert.Equal(t, "pay_order", env.NextOperation)
	assert.JSONEq(t, `{"id":"`+o.ID+`"}`, string(env.NextOperationArgs))
	assert.Equal(t, "created", env.CurrentStatus)
	assert.Equal(t, "paid", env.RequiredStatus)
}

func TestProblemDetailsOnRequest(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)
	status, h, body := do(t, "GET", srv.URL+"/v1/orders/ord_none", "", "", "Accept", "application/problem+json")
	assert.Equal(t, 404, status)
	assert.Equal(t, "application/problem+json", h.Get("Content-Type"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	assert.Equal(t, "no order ord_none", m["detail"])
	assert.Equal(t, "not_found", m["code"])
	env := envelope(t, status, h, body)
	assert.Equal(t, remedy.DialectProblem, env.Dialect)
	assert.Equal(t, "not_found", env.Code)

	status, h, body = do(t, "GET", srv.URL+"/v1/orders/ord_none", "", "", "Accept", "application/problem+json;q=0, application/json")
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, remedy.DialectAgent, envelope(t, status, h, body).Dialect)
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	auth := server.AuthenticatorFunc(func(r *http.Request, op *server.Operation) (server.Principal, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer alice":
			return "alice", nil
		case "Bearer bob":
			if op.ID == "create_order" {
				return "", server.ErrForbidden
			}
			return "bob", nil
		}
		return "", server.ErrUnauthenticated
	})
	srv, _ := newOrderAPI(t, server.WithAuthenticator(auth))
	good := `{"customer_id":"cus_1","currency":"usd","items":[{"sku":"a","quantity":1}]}`

	status, h, body := do(t, "POST", srv.URL+"/v1/orders", "application/json", good)
	env := envelope(t, status, h, body)
	assert.Equal(t, 401, status)
	assert.Equal(t, "unauthorized", env.Code)
	assert.False(t, env.Retryable)
	assert.Equal(t, "Bearer", h.Get("WWW-Authenticate"))

	// Authentication comes before validation: an invalid body from nobody says nothing about the body.
	status, _, body = do(t, "POST", srv.URL+"/v1/orders", "application/json", `{"currency":"xxx"}`)
	assert.Equal(t, 401, status, "%s", body)

	status, h, body = do(t, "POST", srv.URL+"/v1/orders", "application/json", good, "Authorization", "Bearer bob")
	env = envelope(t, status, h, body)
	assert.Equal(t, 403, status)
	assert.Equal(t, "forbidden", env.Code)
	assert.False(t, env.Retryable)

	status, _, body = do(t, "POST", srv.URL+"/v1/orders", "application/json", good, "Authorization", "Bearer alice")
	assert.Equal(t, 201, status, "%s", body)
}

func TestRateLimitPerPrincipal(t *testing.T) {
	t.Parallel()
	auth := server.AuthenticatorFunc(func(r *http.Request, _ *server.Operation) (server.Principal, error) {
		return server.Principal(r.Header.Get("X-User")), nil
	})
	// The limiter's clock stands still unless the test moves it: no token comes back while
	// a slow machine sends the requests.
	clock := storetest.NewClock()
	srv, _ := newOrderAPI(t, server.WithClock(clock.Now), server.WithAuthenticator(auth), server.WithRateLimit(server.RateLimitOptions{PerSecond: 0.5, Burst: 2}))
	get := func(user string) (int, http.Header, []byte) {
		return do(t, "GET", srv.URL+"/v1/orders", "", "", "X-User", user)
	}
	for range 2 {
		status, _, body := get("alice")
		require.Equal(t, 200, status, "%s", body)
	}
	status, h, body := get("alice")
	env := envelope(t, status, h, body)
	assert.Equal(t, 429, status)
	assert.Equal(t, "rate_limited", env.Code)
	assert.True(t, env.Retryable)
	assert.Equal(t, 2*time.Second, env.RetryAfter, "one token at 0.5 a second")
	assert.Equal(t, "2", h.Get("Retry-After"))
	// The RateLimit headers AgentBack and gateways send, which a client without our envelope
	// reads: the bucket, nothing left, and when a token is back.
	assert.Equal(t, "2", h.Get("RateLimit-Limit"))
	assert.Equal(t, "0", h.Get("RateLimit-Remaining"))
	assert.Equal(t, "2", h.Get("RateLimit-Reset"))
	bare, ok := remedy.Parse(429, h, nil)
	require.True(t, ok)
	assert.Equal(t, 2*time.Second, bare.RetryAfter, "the headers alone say when to come back")
	// Another principal has its own bucket.
	status, _, _ = get("bob")
	assert.Equal(t, 200, status)
	// The wait asked is enough.
	clock.Advance(env.RetryAfter)
	status, _, body = get("alice")
	assert.Equal(t, 200, status, "alice, after the wait the server asked: %s", body)
}

func TestRegistrationErrors(t *testing.T) {
	t.Parallel()
	h := func(ctx context.Context, in GetOrder) (Order, error) { return Order{}, nil }
	for _, c := range []struct {
		name, path, want string
		opts             []server.OpOption
	}{
		{"no leading slash", "v1/orders/{id}", "must begin with /", nil},
		{"missing field", "/v1/orders/{order}", "{order} has no field", nil},
		{"field without segment", "/v1/orders/{id}/x/{y}", "{y} has no field", nil},
		{"empty segment", "/v1//orders/{id}", "empty segment", nil},
		{"partial parameter", "/v1/orders/x{id}", "whole segment", nil},
		{"bad id", "/v1/orders/{id}", "operation id", []server.OpOption{server.OperationID("9lives")}},
		{"unknown code", "/v1/orders/{id}", `"nope" is not in the registry`, []server.OpOption{server.Errors("nope")}},
		{"bad status", "/v1/orders/{id}", "not a 2xx", []server.OpOption{server.SuccessStatus(302)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := server.Get(newAPI(t), c.path, h, c.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	t.Run("duplicate route", func(t *testing.T) {
		api, err := server.New()
		if err != nil {
			t.Fatal(err)
		}
		require.NoError(t, server.Get(api, "/v1/orders/{id}", h))
		err = server.Get(api, "/v1/orders/{id}", h, server.OperationID("again"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "already routed")
	})
	t.Run("not a struct", func(t *testing.T) {
		err := server.Post(newAPI(t), "/x", func(ctx context.Context, in string) (string, error) { return in, nil })
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a struct")
	})
	t.Run("nil handler", func(t *testing.T) {
		err := server.Post[CreateOrder, Order](newAPI(t), "/x", nil)
		require.Error(t, err)
	})
}

// Paging is embedded by pointer: its parameters bind through it.
type Paging struct {
	Limit int `query:"limit,omitempty" schema:"maximum=50"`
}

type ListByPage struct {
	*Paging
	Status string `query:"status,omitempty"`
}

func TestParametersThroughEmbeddedPointer(t *testing.T) {
	t.Parallel()
	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Get(api, "/v1/items", func(ctx context.Context, in ListByPage) (map[string]any, error) {
		limit := -1
		if in.Paging != nil {
			limit = in.Limit
		}
		return map[string]any{"limit": limit, "status": in.Status}, nil
	}))
	srv := httptest.NewServer(api)
	defer srv.Close()
	status, _, body := do(t, "GET", srv.URL+"/v1/items?limit=7&status=open", "", "")
	require.Equal(t, 200, status, "%s", body)
	assert.JSONEq(t, `{"limit":7,"status":"open"}`, string(body))
	status, _, body = do(t, "GET", srv.URL+"/v1/items?limit=70", "", "")
	env := envelope(t, status, nil, body)
	assert.Equal(t, "invalid_parameter", env.Code)
	require.Len(t, env.Issues, 1)
	assert.Equal(t, "/limit", env.Issues[0].Path)
	assert.JSONEq(t, `{"maximum":50}`, string(env.Issues[0].Expected))
	assert.Empty(t, env.Issues[0].SuggestedValue, "a bound is expected, not suggested")
}

func TestValidationOverHTTP(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)

	t.Run("every violation at once, sorted by path, with the fixes that keep the meaning", func(t *testing.T) {
		status, h, body := do(t, "POST", srv.URL+"/v1/orders", "application/json",
			`{"currency":"USD","items":[{"sku":"a","quantity":2},{"sku":"","quantity":0}]}`)
		env := envelope(t, status, h, body)
		assert.Equal(t, 422, status)
		assert.Equal(t, "invalid_body", env.Code)
		assert.False(t, env.Retryable, "sent again unchanged, it fails the same way")
		assert.Contains(t, string(body), `"retryable":false`, "the server says so itself")
		var got []string
		for _, is := range env.Issues {
			got = append(got, is.Path+" "+is.Code)
		}
		assert.Equal(t, []string{"/currency enum", "/customer_id required",
			"/items/1/quantity minimum", "/items/1/sku min_length"}, got)
		cur := env.Issues[0]
		assert.Equal(t, []json.RawMessage{json.RawMessage(`"usd"`), json.RawMessage(`"eur"`), json.RawMessage(`"gbp"`)}, cur.AllowedValues)
		assert.JSONEq(t, `"usd"`, string(cur.SuggestedValue))
		assert.JSONEq(t, `"USD"`, string(cur.Received))
		qty := env.Issues[2]
		assert.JSONEq(t, `{"minimum":1}`, string(qty.Expected))
		assert.Empty(t, qty.SuggestedValue, "a quantity of 1 is not what a quantity of 0 meant")
		assert.NotEmpty(t, env.Schema)
		assert.NotContains(t, string(env.Schema), `"note"`, "the schema inlined is the violated part, not the whole document")
	})
	t.Run("an unknown member", func(t *testing.T) {
		status, _, body := do(t, "POST", srv.URL+"/v1/orders", "application/json",
			`{"customer_id":"cus_1","currency":"usd","items":[{"sku":"a","quantity":1}],"colour":"red"}`)
		env := envelope(t, status, nil, body)
		require.Len(t, env.Issues, 1, "%s", body)
		assert.Equal(t, "/colour", env.Issues[0].Path)
		assert.Equal(t, "additional_properties", env.Issues[0].Code)
		assert.Contains(t, env.Issues[0].Message, "note")
	})
	t.Run("a parameter of the wrong type", func(t *testing.T) {
		status, h, body := do(t, "GET", srv.URL+"/v1/orders?limit=ten", "", "")
		env := envelope(t, status, h, body)
		assert.Equal(t, 400, status)
		assert.Equal(t, "invalid_parameter", env.Code)
		require.Len(t, env.Issues, 1)
		assert.Equal(t, "/limit", env.Issues[0].Path)
		assert.Equal(t, "type", env.Issues[0].Code)
		assert.JSONEq(t, `"ten"`, string(env.Issues[0].Received))
	})
	t.Run("repeated query parameters bind as a list", func(t *testing.T) {
		status, _, body := do(t, "GET", srv.URL+"/v1/orders?status=created&status=lost", "", "")
		env := envelope(t, status, nil, body)
		assert.Equal(t, "invalid_parameter", env.Code)
		require.Len(t, env.Issues, 1)
		assert.Equal(t, "/status/1", env.Issues[0].Path)
		assert.Equal(t, "enum", env.Issues[0].Code)
	})
	t.Run("a path parameter sent in the body", func(t *testing.T) {
		status, _, body := do(t, "POST", srv.URL+"/v1/orders/ord_a/pay", "application/json", `{"id":"ord_b"}`)
		env := envelope(t, status, nil, body)
		assert.Equal(t, 400, status)
		assert.Equal(t, "invalid_parameter", env.Code)
		require.Len(t, env.Issues, 1)
		assert.Equal(t, "parameter_in_body", env.Issues[0].Code)
	})
	t.Run("a body that is not an object", func(t *testing.T) {
		status, _, body := do(t, "POST", srv.URL+"/v1/orders", "application/json", `[1,2]`)
		env := envelope(t, status, nil, body)
		assert.Equal(t, 422, status)
		require.NotEmpty(t, env.Issues)
		assert.Equal(t, "", env.Issues[0].Path)
		assert.Equal(t, "type", env.Issues[0].Code)
	})
}

// A body and parameters together: what passes is bound whole, whichever way it was checked,
// and what does not is reported as the full validator sees it.
func TestBodyWithParameters(t *testing.T) {
	t.Parallel()
	type EditNote struct {
		ID      string   `path:"id" schema:"pattern=^n_"`
		Version int      `query:"version" schema:"minimum=1"`
		Text    string   `json:"text" schema:"maxLength=20"`
		Tags    []string `json:"tags,omitempty" schema:"uniqueItems"`
	}
	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Put(api, "/v1/notes/{id}", func(ctx context.Context, in EditNote) (EditNote, error) {
		return in, nil
	}, server.OperationID("edit_note")))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)

	status, _, body := do(t, "PUT", srv.URL+"/v1/notes/n_7?version=3", "application/json", `{"text":"caf\u00e9","tags":["a","b"]}`)
	require.Equal(t, 200, status, "%s", body)
	var got EditNote
	require.NoError(t, json.Unmarshal(body, &got))
	assert.Equal(t, EditNote{ID: "n_7", Version: 3, Text: "café", Tags: []string{"a", "b"}}, got)

	for _, c := range []struct {
		name, target, body string
		status             int
		code, path, issue  string
	}{
		{"a parameter in the body", "/v1/notes/n_7?version=3", `{"text":"x","version":4}`, 400, "invalid_parameter", "/version", "parameter_in_body"},
		{"a required parameter missing", "/v1/notes/n_7", `{"text":"x"}`, 400, "invalid_parameter", "/version", "required"},
		{"a bad parameter", "/v1/notes/x_7?version=3", `{"text":"x"}`, 400, "invalid_parameter", "/id", "pattern"},
		{"a bad body member", "/v1/notes/n_7?version=3", `{"text":"x","tags":["a","a"]}`, 422, "invalid_body", "/tags", "unique_items"},
		{"a member named twice", "/v1/notes/n_7?version=3", `{"text":"x","text":"this one is far too long"}`, 400, "invalid_json", "/text", "duplicate_member"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, h, body := do(t, "PUT", srv.URL+c.target, "application/json", c.body)
			env := envelope(t, status, h, body)
			assert.Equal(t, c.status, status, "%s", body)
			assert.Equal(t, c.code, env.Code)
			require.NotEmpty(t, env.Issues, "%s", body)
			assert.Equal(t, c.path, env.Issues[0].Path)
			assert.Equal(t, c.issue, env.Issues[0].Code)
		})
	}
}

// A handler may answer with its own envelope, sent as it is.
func TestHandlerEnvelope(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)
	status, h, body := do(t, "POST", srv.URL+"/v1/fail", "application/json", `{"code":"envelope"}`)
	env := envelope(t, status, h, body)
	assert.Equal(t, 423, status)
	assert.Equal(t, "order_locked", env.Code)
	assert.Equal(t, 1500*time.Millisecond, env.RetryAfter)
	assert.Equal(t, "2", h.Get("Retry-After"))
	assert.NotEmpty(t, env.TraceID)
}

// JSON Schema counts 1.2e3 and 1200.0 as integers: they bind into an int as the integer they
// denote, and a fraction is still refused.
func TestIntegersWrittenWithExponentOrFraction(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t)
	for _, amount := range []string{"1.2e3", "1200.0", "12e2"} {
		status, _, body := do(t, "POST", srv.URL+"/v1/invoices", "application/json",
			`{"customer_id":"cus_ada","currency":"usd","amount":`+amount+`}`)
		require.Equal(t, 201, status, "%s: %s", amount, body)
		assert.Contains(t, string(body), `"amount":1200`, amount)
	}
	status, _, body := do(t, "POST", srv.URL+"/v1/invoices", "application/json",
		`{"customer_id":"cus_ada","currency":"usd","amount":1200.5}`)
	assert.Equal(t, 422, status, "%s", body)
}

// JSON text is UTF-8: a body that is not is refused at its first bad byte, on the fast path's
// refusal and the full decoder's alike, never bound with U+FFFD in its place.
func TestInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	_, store, srv := billingServer(t)
	for _, body := range []string{
		"{\"customer_id\":\"cus_ada\",\"currency\":\"usd\",\"amount\":1200,\"memo\":\"caf\xe9\"}",
		"{\"memo\":\"\xff\",\"customer_id\":\"cus_ada\",\"currency\":\"usd\",\"amount\":9,\"amount\":1}",
	} {
		status, _, resp := do(t, "POST", srv.URL+"/v1/invoices", "application/json", body)
		assert.Equal(t, 400, status, "%s", resp)
		assert.Contains(t, string(resp), "invalid UTF-8 at byte")
	}
	assert.Zero(t, store.Effects("create_invoice"))
}

// newAPI is server.New for a test that gives it only options it takes.
func newAPI(t testing.TB, opts ...server.Option) *server.API {
	t.Helper()
	api, err := server.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return api
}
