package tools_test

import (
	"flag"
	"testing"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/scriptsrv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/modeltext")

// newClient is a client of srv that never makes a test wait between attempts.
func newClient(t *testing.T, srv *scriptsrv.Server, opts ...client.Option) *client.Client {
	t.Helper()
	return scriptsrv.Client(t, srv, opts...)
}
