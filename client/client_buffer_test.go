package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/client"
)

// allocated is how many bytes the process allocated while f ran. The tests that read it do not
// run in parallel, so that what other tests allocate meanwhile is little (the idle servers of
// earlier tests); the bounds they assert are far above that and far below the bug's.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestClientBufferDeclaredLength: a success declaring Content-Length: 5000000000 and sending
// one byte. The client allocated the whole 64 MiB bound up front for each attempt (336 MB over
// five); a buffer that grows with what arrives allocates kilobytes.
func TestClientBufferDeclaredLength(t *testing.T) {
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "5000000000")
		w.WriteHeader(200)
		w.Write([]byte("{"))
	})
	c := newClient(t, srv, client.WithOperations(opGetOrder))

	var err error
	got := allocated(func() {
		_, err = c.Call(context.Background(), "get_order", json.RawMessage(`{"id":"1"}`))
	})
	require.Error(t, err, "the body ended before its declared length")
	attempts := len(srv.Requests())
	require.GreaterOrEqual(t, attempts, 2, "a GET cut short is retried")
	t.Logf("%d attempts, %d KiB allocated", attempts, got>>10)
	assert.Less(t, got, uint64(attempts)*(8<<20),
		"each attempt allocates with what arrived, not the 64 MiB the bound allows")
}

// TestClientBufferGrowth: a success streaming past the bound without a length. What the
// client allocates to read the bound stays under about twice the bound: before, growing by
// append's quarter steps, it was five times (394 MB for a 64 MiB bound).
func TestClientBufferGrowth(t *testing.T) {
	const bound = 16 << 20
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		for sent := 0; sent < 4*bound && r.Context().Err() == nil; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	c := newClient(t, srv, client.WithOperations(opGetOrder), client.WithMaxResult(bound))

	var err error
	got := allocated(func() {
		_, err = c.Call(context.Background(), "get_order", json.RawMessage(`{"id":"1"}`))
	})
	require.ErrorContains(t, err, "larger than")
	require.Len(t, srv.Requests(), 1)
	t.Logf("%d MiB allocated for a %d MiB bound", got>>20, bound>>20)
	assert.Less(t, got, uint64(5*bound/2), "growth allocates under about twice the bound")
}
