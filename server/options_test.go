package server_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/remedy-go/remedy/server"
)

// TestNewRefusesBadOptions: an option given a value it cannot take makes New fail with an
// error naming the option — before, each of these was ignored and the API ran on its default.
func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for want, opt := range map[string]server.Option{
		"WithMaxBody":          server.WithMaxBody(0),
		"WithClock":            server.WithClock(nil),
		"WithRegistry":         server.WithRegistry(nil),
		"WithLogger":           server.WithLogger(nil),
		"WithAuthenticator":    server.WithAuthenticator(nil),
		"WithRateLimit":        server.WithRateLimit(math.NaN(), 10),
		"WithAuthFailureLimit": server.WithAuthFailureLimit(math.Inf(1), 10, nil),
		"WithConfirmation":     server.WithConfirmation(server.ConfirmOptions{TTL: -time.Second}),
		"WithIdempotency":      server.WithIdempotency(server.IdempotencyOptions{Lease: -time.Second}),
		"WithOpenAPIPath":      server.WithOpenAPIPath("openapi.json"),
		"WithMCP":              server.WithMCP(server.MCPOptions{Path: "mcp"}),
		"WithHostCheck":        server.WithHostCheck("localhost", ""),
	} {
		api, err := server.New(opt)
		if err == nil || api != nil || !strings.HasPrefix(err.Error(), "server: "+want+":") {
			t.Errorf("%s: New returned %v, %v", want, api, err)
		}
	}
	// The values the options document as meaningful are taken.
	if _, err := server.New(server.WithRateLimit(0, 0), server.WithOpenAPIPath(""), server.WithHostCheck(),
		server.WithIdempotency(server.IdempotencyOptions{Wait: -1}), nil); err != nil {
		t.Errorf("documented values refused: %v", err)
	}
}
