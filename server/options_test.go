package server_test

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
	"github.com/stretchr/testify/assert"
)

// TestNewRefusesBadOptions: an option given a value it cannot take makes New fail with an
// error naming the option — before, each of these was ignored and the API ran on its default.
func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		want string
		opt  server.Option
	}{
		{"WithMaxBody", server.WithMaxBody(0)},
		{"WithClock", server.WithClock(nil)},
		{"WithRegistry", server.WithRegistry(nil)},
		{"WithLogger", server.WithLogger(nil)},
		{"WithAuthenticator", server.WithAuthenticator(nil)},
		{"WithRateLimit", server.WithRateLimit(server.RateLimitOptions{PerSecond: math.NaN(), Burst: 10})},
		{"WithRateLimit", server.WithRateLimit(server.RateLimitOptions{PerSecond: 10, Burst: -1})},
		{"WithAuthFailureLimit", server.WithAuthFailureLimit(server.AuthFailureLimitOptions{PerSecond: math.Inf(1), Burst: 10})},
		{"WithAuthFailureLimit", server.WithAuthFailureLimit(server.AuthFailureLimitOptions{Burst: -1})},
		{"WithConfirmation", server.WithConfirmation(server.ConfirmationOptions{TTL: -time.Second})},
		{"WithIdempotency", server.WithIdempotency(server.IdempotencyOptions{Lease: -time.Second})},
		{"WithOpenAPIPath", server.WithOpenAPIPath("openapi.json")},
		{"WithMCP", server.WithMCP(server.MCPOptions{Path: "mcp"})},
		{"WithHostCheck", server.WithHostCheck("localhost", "")},
	} {
		api, err := server.New(c.opt)
		if err == nil || api != nil || !strings.HasPrefix(err.Error(), "server: "+c.want+":") {
			t.Errorf("%s: New returned %v, %v", c.want, api, err)
		}
	}
	// The values the options document as meaningful are taken.
	if _, err := server.New(server.WithRateLimit(server.RateLimitOptions{}), server.WithOpenAPIPath(""), server.WithHostCheck(),
		server.WithIdempotency(server.IdempotencyOptions{Wait: -1}),
		server.WithAuthFailureLimit(server.AuthFailureLimitOptions{PerSecond: -1}), nil); err != nil {
		t.Errorf("documented values refused: %v", err)
	}
}

// TestLimitOptionsDefaults: a zero field of a limit's options takes its default (the burst of a
// rate limit is its rate rounded up; the failed-authentication limit's are
// DefaultAuthFailureRate and DefaultAuthFailureBurst), and a negative rate turns the
// failed-authentication limit off. The clock stands still, so no bucket refills meanwhile.
func TestLimitOptionsDefaults(t *testing.T) {
	t.Parallel()
	statuses := func(url string, n int, header ...string) (out []int) {
		for range n {
			status, _, _ := do(t, "GET", url+"/v1/invoices/in_1", "", "", header...)
			out = append(out, status)
		}
		return out
	}
	limited := func(statuses []int) (n int) {
		for _, s := range statuses {
			if s == http.StatusTooManyRequests {
				n++
			}
		}
		return n
	}
	clock := storetest.NewClock()
	_, _, srv := billingServer(t, server.WithClock(clock.Now), server.WithRateLimit(server.RateLimitOptions{PerSecond: 2.5}))
	got := statuses(srv.URL, 4)
	assert.Equal(t, 1, limited(got), "2.5 a second holds 3 requests: %v", got)
	assert.Equal(t, http.StatusTooManyRequests, got[3], "%v", got)

	_, _, srv = billingServer(t, server.WithClock(clock.Now), server.WithAuthenticator(byBearer),
		server.WithAuthFailureLimit(server.AuthFailureLimitOptions{Key: func(r *http.Request) string { return r.Header.Get("X-Client") }}))
	got = statuses(srv.URL, server.DefaultAuthFailureBurst+1, "X-Client", "a")
	assert.Equal(t, 1, limited(got), "the default burst of failures, then the limit: %v", got)
	assert.Equal(t, http.StatusTooManyRequests, got[server.DefaultAuthFailureBurst], "%v", got)

	_, _, srv = billingServer(t, server.WithClock(clock.Now), server.WithAuthenticator(byBearer),
		server.WithAuthFailureLimit(server.AuthFailureLimitOptions{PerSecond: -1}))
	got = statuses(srv.URL, server.DefaultAuthFailureBurst+5)
	assert.Zero(t, limited(got), "no limit on failed authentication: %v", got)
}
