package tools_test

import (
	"flag"
	"net/http"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/scriptsrv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/modeltext")

// newClient is a client of srv that never makes a test wait between attempts.
func newClient(t *testing.T, srv *scriptsrv.Server, opts ...client.Option) *client.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	all := append([]client.Option{
		client.WithBaseURL(srv.URL),
		client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }),
	}, opts...)
	c, err := client.New(all...)
	require.NoError(t, err)
	return c
}
