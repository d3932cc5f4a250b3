package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/mcp"
)

// hangGuard bounds what a test waits for; it is reached only when something hangs.
const hangGuard = 60 * time.Second

// refusal answers a tools/call in place of the MCP server, given the JSON-RPC id of the call.
type refusal func(w http.ResponseWriter, id json.RawMessage)

// rateLimited answers as AgentBack's mcp-http answers a call over its tool's rate: HTTP 429,
// Retry-After, and a JSON-RPC error (-32029) for the call's id.
func rateLimited(retryAfter string) refusal {
	return func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", retryAfter)
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":-32029,"message":"Rate limit exceeded for tool 'quote'"},"id":%s}`, id)
	}
}

// quoteServer serves, on loopback, a go-sdk MCP server with one tool, quote, which returns
// the currency it is given; before the server, a handler answers the tools/calls refuse picks
// (by the call's arguments and its number among the calls, from 1) with that refusal instead.
// It returns the server's URL and the number of quotes the tool ran.
func quoteServer(t *testing.T, refuse func(args map[string]any, n int) refusal) (string, func() int) {
	t.Helper()
	var mu sync.Mutex
	var calls, runs int
	s := sdk.NewServer(&sdk.Implementation{Name: "limited", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "quote", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct {
			Currency string `json:"currency"`
		}) (*sdk.CallToolResult, map[string]any, error) {
			mu.Lock()
			runs++
			mu.Unlock()
			return nil, map[string]any{"currency": in.Currency}, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Arguments map[string]any `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				if answer := refuse(msg.Params.Arguments, n); answer != nil {
					answer(w, msg.ID)
					return
				}
			}
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int {
		mu.Lock()
		defer mu.Unlock()
		return runs
	}
}

// connectWith opens a session with the server at url over the HTTP client hc (nil: the
// go-sdk's default).
func connectWith(t *testing.T, url string, hc *http.Client) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A 429 with Retry-After over MCP is waited exactly as over REST: the loop's decision after it
// is the server's wait, not its own backoff. Without HTTPClient the go-sdk drops the header,
// and the loop retries on its backoff.
func TestRetryAfterOverMCP(t *testing.T) {
	t.Parallel()
	url, runs := quoteServer(t, func(_ map[string]any, n int) refusal {
		if n == 1 {
			return rateLimited("1")
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := mcp.NewClient(ctx, connectWith(t, url, mcp.HTTPClient(nil)))
	require.NoError(t, err)

	resp, err := c.Call(ctx, "quote", map[string]any{"currency": "eur"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"currency":"eur"}`, string(resp.Body))
	require.Len(t, resp.Attempts, 2)
	first := resp.Attempts[0]
	assert.Equal(t, http.StatusTooManyRequests, first.Status)
	require.NotNil(t, first.Envelope)
	assert.Equal(t, remedy.DialectJSONRPC, first.Envelope.Dialect, "the body the go-sdk drops was read")
	assert.Equal(t, "-32029", first.Envelope.Code)
	assert.Equal(t, "Rate limit exceeded for tool 'quote'", first.Envelope.Message)
	assert.Equal(t, remedy.CategoryRateLimit, first.Envelope.Category)
	assert.True(t, first.Envelope.Retryable)
	assert.Equal(t, time.Second, first.Envelope.RetryAfter, "Retry-After: 1")
	assert.Equal(t, client.ActRetry, first.Decision.Action)
	assert.Equal(t, time.Second, first.Decision.Asked)
	assert.Equal(t, time.Second, first.Decision.Wait, "the server's wait, not the backoff")
	assert.Equal(t, 1, runs())

	t.Run("without HTTPClient", func(t *testing.T) {
		url, _ := quoteServer(t, func(_ map[string]any, n int) refusal {
			if n == 1 {
				return rateLimited("1")
			}
			return nil
		})
		c, err := mcp.NewClient(ctx, connectWith(t, url, nil))
		require.NoError(t, err)
		resp, err := c.Call(ctx, "quote", map[string]any{"currency": "eur"})
		require.NoError(t, err)
		require.Len(t, resp.Attempts, 2)
		first := resp.Attempts[0]
		assert.Equal(t, http.StatusTooManyRequests, first.Status, "the go-sdk keeps the status text")
		require.NotNil(t, first.Envelope)
		assert.Zero(t, first.Envelope.RetryAfter, "and drops Retry-After")
		assert.Zero(t, first.Decision.Asked)
		assert.Less(t, first.Decision.Wait, time.Second, "the loop's own backoff")
	})
}

// A wait longer than MaxWait gets no early retry: the call stops at once, saying when it can
// succeed, as it does over REST.
func TestRetryAfterOverMaxWaitOverMCP(t *testing.T) {
	t.Parallel()
	url, runs := quoteServer(t, func(map[string]any, int) refusal { return rateLimited("120") })
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := mcp.NewClient(ctx, connectWith(t, url, mcp.HTTPClient(nil)))
	require.NoError(t, err)

	_, err = c.Call(ctx, "quote", map[string]any{"currency": "eur"})
	require.ErrorIs(t, err, client.ErrWaitTooLong)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	assert.Len(t, ce.Attempts, 1, "no early retry")
	var later *client.RetryLater
	require.ErrorAs(t, err, &later)
	assert.Equal(t, 120*time.Second, later.After)
	assert.Zero(t, runs())
}

// Calls in flight at once on one session each get their own HTTP answer: the server holds
// every call until all have arrived, then refuses the even ones, each with a wait of its own
// (past MaxWait, so that each stops at once with it), and lets the odd ones through.
func TestConcurrentCallsGetTheirOwnAnswers(t *testing.T) {
	t.Parallel()
	const n = 16
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	url, runs := quoteServer(t, func(args map[string]any, calls int) refusal {
		if calls <= n { // a retry, were there one, would not be held
			arrived.Done()
			select {
			case <-all:
			case <-time.After(hangGuard):
			}
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(fmt.Sprint(args["currency"]), "c"))
		if i%2 == 0 {
			return rateLimited(strconv.Itoa(100 + i))
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := mcp.NewClient(ctx, connectWith(t, url, mcp.HTTPClient(nil)))
	require.NoError(t, err)

	type outcome struct {
		resp *client.Response
		err  error
	}
	out := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out[i].resp, out[i].err = c.Call(ctx, "quote", map[string]any{"currency": "c" + strconv.Itoa(i)})
		})
	}
	wg.Wait()
	for i, o := range out {
		if i%2 == 1 {
			if assert.NoError(t, o.err, "call %d", i) {
				assert.JSONEq(t, fmt.Sprintf(`{"currency":"c%d"}`, i), string(o.resp.Body), "call %d", i)
				assert.Len(t, o.resp.Attempts, 1, "call %d", i)
			}
			continue
		}
		var later *client.RetryLater
		if assert.ErrorAs(t, o.err, &later, "call %d", i) {
			assert.Equal(t, time.Duration(100+i)*time.Second, later.After, "call %d: its own answer's wait", i)
		}
		var ce *client.CallError
		if assert.ErrorAs(t, o.err, &ce, "call %d", i) {
			assert.Len(t, ce.Attempts, 1, "call %d", i)
		}
	}
	assert.Equal(t, n/2, runs())
}

// A refusal whose body does not end is read only up to the bound: the call ends with what its
// start and its headers say, and the go-sdk closes the rest. Were the copy unbounded, the call
// would wait for the hang guard.
func TestEndlessRefusalIsBounded(t *testing.T) {
	t.Parallel()
	url, _ := quoteServer(t, func(map[string]any, int) refusal {
		return func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32029,"message":"Rate limit exceeded","data":"`, id)
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for {
				if _, err := w.Write(chunk); err != nil {
					return // the client hung up
				}
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := mcp.NewClient(ctx, connectWith(t, url, mcp.HTTPClient(nil)))
	require.NoError(t, err)

	_, err = c.Call(ctx, "quote", map[string]any{"currency": "eur"})
	require.ErrorIs(t, err, client.ErrWaitTooLong)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Envelope)
	assert.Equal(t, remedy.DialectTruncated, ce.Envelope.Dialect)
	assert.Equal(t, "Rate limit exceeded", ce.Envelope.Message, "read from the body's start")
	assert.Equal(t, 120*time.Second, ce.Envelope.RetryAfter)
	assert.Len(t, ce.Attempts, 1)
}

// The go-sdk still reads the whole body of a refusal after the copy was taken: a JSON-RPC
// error in a 400 larger than the bound is still decoded by it (had it not been, the go-sdk
// would have failed the whole connection, and the next call with it).
func TestRefusalBodyStaysReadable(t *testing.T) {
	t.Parallel()
	url, runs := quoteServer(t, func(args map[string]any, _ int) refusal {
		if args["currency"] != "bad" {
			return nil
		}
		return func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Invalid params","data":"%s"}}`,
				id, strings.Repeat("x", 2*remedy.DefaultMaxBody))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := mcp.NewClient(ctx, connectWith(t, url, mcp.HTTPClient(nil)))
	require.NoError(t, err)

	_, err = c.Call(ctx, "quote", map[string]any{"currency": "bad"})
	require.ErrorIs(t, err, client.ErrNotRetryable)
	var ce *client.CallError
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Envelope)
	assert.Equal(t, http.StatusBadRequest, ce.Envelope.Status)
	assert.Equal(t, remedy.DialectTruncated, ce.Envelope.Dialect, "the copy is bounded")
	assert.Equal(t, "Invalid params", ce.Envelope.Message, "read from the body's start")
	assert.Len(t, ce.Attempts, 1)

	resp, err := c.Call(ctx, "quote", map[string]any{"currency": "usd"})
	require.NoError(t, err, "the session still works: the go-sdk decoded the whole refusal")
	assert.JSONEq(t, `{"currency":"usd"}`, string(resp.Body))
	assert.Equal(t, 1, runs())
}

// HTTPClient wraps its base's RoundTripper, and changes neither the base nor a client that is
// already one of its own.
func TestHTTPClientKeepsItsBase(t *testing.T) {
	t.Parallel()
	var sawHeader bool
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawHeader = r.Header.Get("X-Base") == "yes"
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	base := &http.Client{Transport: headerAdder{http.DefaultTransport}, Timeout: hangGuard}
	hc := mcp.HTTPClient(base)
	assert.Equal(t, headerAdder{http.DefaultTransport}, base.Transport, "the base is not changed")
	assert.Equal(t, hangGuard, hc.Timeout)
	again := mcp.HTTPClient(hc)
	assert.Equal(t, hc.Transport, again.Transport, "not wrapped twice")

	resp, err := hc.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	assert.True(t, sawHeader, "the request went through the base's RoundTripper")
}

// headerAdder is a RoundTripper of the kind a caller already has: it adds a header.
type headerAdder struct{ base http.RoundTripper }

func (h headerAdder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Base", "yes")
	return h.base.RoundTrip(r)
}
