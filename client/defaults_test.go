package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/mcp"
)

// answer is what a test server answers the n-th call (from 1) of create_order with args: a
// status, and a body (an envelope, for a failure).
type answer func(n int, args map[string]any) (status int, body string)

// entryPoint makes one call of create_order with args through an entry point built with no
// option but what it needs to reach the server, and says whether the call succeeded.
type entryPoint func(ctx context.Context, args string) bool

// served is a server answering create_order as answer says, over HTTP or MCP; requests counts
// the calls it received.
type served struct {
	answer   answer
	requests atomic.Int32
}

func (s *served) next(args map[string]any) (int, string) {
	return s.answer(int(s.requests.Add(1)), args)
}

// The entry points, each against a real server on loopback that answers as told.
var entryPoints = []struct {
	name  string
	start func(t *testing.T, s *served) entryPoint
}{
	{"New", func(t *testing.T, s *served) entryPoint {
		url := httpServer(t, s)
		c, err := client.New(client.WithBaseURL(url),
			client.WithOperations(client.Operation{Name: "create_order", Method: "POST", Path: "/v1/orders"}))
		require.NoError(t, err)
		return func(ctx context.Context, args string) bool {
			_, err := c.Call(ctx, "create_order", json.RawMessage(args))
			return err == nil
		}
	}},
	{"NewRoundTripper", func(t *testing.T, s *served) entryPoint {
		url := httpServer(t, s)
		rt, err := client.NewRoundTripper(nil)
		require.NoError(t, err)
		hc := &http.Client{Transport: rt}
		return func(ctx context.Context, args string) bool {
			req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/orders", bytes.NewReader([]byte(args)))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}
	}},
	{"NewLoop", func(t *testing.T, s *served) entryPoint {
		url := httpServer(t, s)
		// A transport of the caller's own: one POST per attempt, its failure read by Parse.
		tr := client.TransportFunc(func(ctx context.Context, req *client.Request) (*client.Response, error) {
			hreq, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/orders", bytes.NewReader(req.Args))
			if err != nil {
				return nil, err
			}
			hresp, err := http.DefaultClient.Do(hreq)
			if err != nil {
				return nil, err
			}
			defer hresp.Body.Close()
			body, err := io.ReadAll(hresp.Body)
			if err != nil {
				return nil, err
			}
			resp := &client.Response{Status: hresp.StatusCode, Header: hresp.Header, Body: body}
			if env, ok := remedy.Parse(hresp.StatusCode, hresp.Header, body); ok {
				resp.Envelope = env
			}
			return resp, nil
		})
		loop, err := client.NewLoop(tr)
		require.NoError(t, err)
		return func(ctx context.Context, args string) bool {
			call, err := client.NewCall("create_order", json.RawMessage(args))
			require.NoError(t, err)
			call.Origin = url
			_, err = loop.Do(ctx, call)
			return err == nil
		}
	}},
	{"mcp.NewClient", func(t *testing.T, s *served) entryPoint {
		srv := sdk.NewServer(&sdk.Implementation{Name: "orders", Version: "1"}, nil)
		srv.AddTool(&sdk.Tool{Name: "create_order", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var args map[string]any
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, err
				}
				status, body := s.next(args)
				return &sdk.CallToolResult{IsError: status != http.StatusOK, Content: []sdk.Content{&sdk.TextContent{Text: body}}}, nil
			})
		hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
		t.Cleanup(hs.Close)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		c, err := mcp.NewClient(ctx, cs)
		require.NoError(t, err)
		return func(ctx context.Context, args string) bool {
			_, err := c.Call(ctx, "create_order", json.RawMessage(args))
			return err == nil
		}
	}},
}

func httpServer(t *testing.T, s *served) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var args map[string]any
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		status, body := s.next(args)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Every entry point has the same defaults (see client.Option), each shown by what it does
// against a server: it makes a repair that changes nothing the call means, and refuses one
// that does; it refuses a confirmation; it waits at most DefaultMaxWait, and a wait it will
// not take holds its other calls to the server (a pacer); and a retry budget of 10 tokens
// bounds an outage (12 calls into it cost 12 + 10 requests).
func TestEveryEntryPointHasTheSameDefaults(t *testing.T) {
	t.Parallel()
	const ok = `{"id":"ord_1"}`
	checks := []struct {
		name   string
		answer answer
		run    func(t *testing.T, call entryPoint) (requests int32)
		want   int32 // requests the server received
	}{
		{"a lossless repair is made", func(n int, args map[string]any) (int, string) {
			if args["currency"] != "eur" {
				return 422, `{"error":{"statusCode":422,"code":"invalid_body","message":"currency must be one of usd, eur","issues":[{"path":["currency"],"code":"enum","message":"currency must be one of usd, eur","allowed_values":["usd","eur"]}]}}`
			}
			return 200, ok
		}, func(t *testing.T, call entryPoint) int32 {
			assert.True(t, call(context.Background(), `{"currency":"EUR","amount":5}`), "repaired and sent again")
			return 0
		}, 2},
		{"a lossy repair is refused", func(int, map[string]any) (int, string) {
			return 422, `{"error":{"statusCode":422,"code":"invalid_body","message":"amount must be at most 1000","issues":[{"path":["amount"],"code":"maximum","message":"amount must be at most 1000","expected":{"maximum":1000},"received":5000}]}}`
		}, func(t *testing.T, call entryPoint) int32 {
			assert.False(t, call(context.Background(), `{"currency":"eur","amount":5000}`))
			return 0
		}, 1},
		{"a confirmation is refused", func(int, map[string]any) (int, string) {
			return 409, `{"error":{"statusCode":409,"code":"confirmation_required","message":"Charge 50 eur?","retryable":true,"confirmationToken":"tok_1"}}`
		}, func(t *testing.T, call entryPoint) int32 {
			assert.False(t, call(context.Background(), `{"currency":"eur","amount":50}`))
			return 0
		}, 1},
		{"a wait past DefaultMaxWait is not taken, and holds the other calls", func(int, map[string]any) (int, string) {
			return 429, `{"error":{"statusCode":429,"code":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":31000}}`
		}, func(t *testing.T, call entryPoint) int32 {
			assert.False(t, call(context.Background(), `{"currency":"eur","amount":1}`))
			assert.False(t, call(context.Background(), `{"currency":"eur","amount":2}`), "held by the pacer, not sent")
			return 0
		}, 1},
		{"a retry budget of 10 bounds an outage", func(int, map[string]any) (int, string) {
			return 500, `{"error":{"statusCode":500,"code":"internal","message":"down","retryable":true}}`
		}, func(t *testing.T, call entryPoint) int32 {
			var wg sync.WaitGroup
			for i := range 12 {
				wg.Go(func() {
					assert.False(t, call(context.Background(), `{"currency":"eur","amount":`+strconv.Itoa(i)+`}`))
				})
			}
			wg.Wait()
			return 0
		}, 12 + 10},
	}
	for _, ep := range entryPoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range checks {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					s := &served{answer: c.answer}
					c.run(t, ep.start(t, s))
					assert.Equal(t, c.want, s.requests.Load(), "requests the server received")
				})
			}
		})
	}
}
