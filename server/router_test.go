package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/server"
)

// sendRaw sends a request whose path goes out exactly as written, dots and empty segments
// included, as a client that does not clean paths sends it.
func sendRaw(t *testing.T, method, base, path string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+"/", nil)
	require.NoError(t, err)
	req.URL.Opaque = path
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// The mux cleans a path and redirects to the result; the router matches the path as it was
// sent instead: a dot segment is a parameter's value (refused), an empty segment matches
// nothing, and no redirect ever goes out.
func TestRoutingPathAsWritten(t *testing.T) {
	t.Parallel()
	srv, _ := newOrderAPI(t)
	// An escaped slash is a parameter's value, refused, alone (which the mux reads as a
	// trailing slash and matches to nothing) as in a longer one: the operation exists.
	for _, path := range []string{"/v1/orders/..", "/v1/orders/.", "/v1/orders/../ship", "/v1/orders/%2F",
		"/v1/orders/%2f/ship", "/v1/orders/a%2Fb"} {
		t.Run(path, func(t *testing.T) {
			method := "GET"
			if strings.HasSuffix(path, "/ship") {
				method = "POST"
			}
			status, h, body := sendRaw(t, method, srv.URL, path)
			env := envelope(t, status, h, body)
			assert.Equal(t, 400, status, "%s", body)
			assert.Equal(t, "invalid_parameter", env.Code)
			require.Len(t, env.Issues, 1)
			assert.Equal(t, "/id", env.Issues[0].Path)
			assert.Equal(t, "invalid_path_segment", env.Issues[0].Code)
		})
	}
	for _, path := range []string{"//v1/orders", "/v1//orders", "/v1/orders/", "/v1/./orders", "/v1/orders/ord_a/../pay"} {
		t.Run(path, func(t *testing.T) {
			status, h, body := sendRaw(t, "GET", srv.URL, path)
			env := envelope(t, status, h, body)
			assert.Equal(t, 404, status, "%s", body)
			assert.Equal(t, "not_found", env.Code)
			assert.Empty(t, h.Get("Location"))
		})
	}
}

type routeIn struct {
	A string `path:"thing.id" json:"-"`
	B string `path:"sub-id" json:"-"`
}

type oneIn struct {
	ID string `path:"id" json:"-"`
}

// What the mux decides: the method is part of the match, a literal beats a parameter, HEAD
// is served by GET, the root is only the root, and parameter names the mux would not take
// ('.' and '-') still bind.
func TestRoutingByServeMux(t *testing.T) {
	t.Parallel()
	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	answer := func(name string) func(context.Context, oneIn) (map[string]string, error) {
		return func(_ context.Context, in oneIn) (map[string]string, error) {
			return map[string]string{"op": name, "id": in.ID}, nil
		}
	}
	require.NoError(t, server.Get(api, "/v1/things/special", func(context.Context, struct{}) (map[string]string, error) {
		return map[string]string{"op": "special"}, nil
	}))
	require.NoError(t, server.Post(api, "/v1/things/{id}", answer("post_thing")))
	require.NoError(t, server.Get(api, "/v1/things/{id}", answer("get_thing")))
	require.NoError(t, server.Get(api, "/v1/things/{thing.id}/{sub-id}", func(_ context.Context, in routeIn) (map[string]string, error) {
		return map[string]string{"A": in.A, "B": in.B}, nil
	}))
	require.NoError(t, server.Get(api, "/", func(context.Context, struct{}) (map[string]string, error) {
		return map[string]string{"op": "root"}, nil
	}))
	srv := httptest.NewServer(api)
	defer srv.Close()
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/v1/things/special", `{"op":"special"}`},
		{"GET", "/v1/things/other", `{"op":"get_thing","id":"other"}`},
		// The literal route has no POST: the parameter's does.
		{"POST", "/v1/things/special", `{"op":"post_thing","id":"special"}`},
		// The mux compares a segment unescaped, and the handler gets the value decoded.
		{"GET", "/v1/things/%73pecial", `{"op":"special"}`},
		{"GET", "/v1/things/a%20b", `{"op":"get_thing","id":"a b"}`},
		{"GET", "/v1/things/t1/s-2", `{"A":"t1","B":"s-2"}`},
		{"GET", "/", `{"op":"root"}`},
	} {
		status, _, body := do(t, c.method, srv.URL+c.path, "", "")
		assert.Equal(t, 200, status, "%s %s: %s", c.method, c.path, body)
		assert.JSONEq(t, c.want, string(body), "%s %s", c.method, c.path)
	}
	for _, path := range []string{"/v1/things/x", "/v1/things/special"} {
		status, h, body := do(t, "HEAD", srv.URL+path, "", "")
		assert.Equal(t, 200, status, path)
		assert.Empty(t, body)
		assert.Equal(t, "application/json", h.Get("Content-Type"))
	}

	for _, path := range []string{"/v1/nothing", "/%2F"} {
		status, h, body := do(t, "GET", srv.URL+path, "", "")
		assert.Equal(t, 404, status, "%s: the root route is the root only", path)
		assert.Equal(t, "not_found", envelope(t, status, h, body).Code)
	}

	status, h, body := do(t, "DELETE", srv.URL+"/v1/things/special", "", "")
	env := envelope(t, status, h, body)
	assert.Equal(t, 405, status)
	assert.Equal(t, "GET, POST", h.Get("Allow"), "HEAD goes without saying, as it did")
	assert.Equal(t, []string{"GET /v1/things/special (get_v1_things_special)", "POST /v1/things/{id} (post_v1_things_id)"}, env.Suggestions)
	assert.Contains(t, env.Message, "allowed: GET, POST")
}

// Routes the mux could not choose between are refused at registration with an error naming
// the other operation and a path both match; none panics.
func TestRouteConflicts(t *testing.T) {
	t.Parallel()
	h := func(context.Context, oneIn) (struct{}, error) { return struct{}{}, nil }
	type twoIn struct {
		X string `path:"x" json:"-"`
		Y string `path:"y" json:"-"`
	}
	h2 := func(context.Context, twoIn) (struct{}, error) { return struct{}{}, nil }

	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Get(api, "/v1/a/{id}", h, server.OperationID("first")))
	err = server.Get(api, "/v1/{id}/b", h, server.OperationID("second"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "conflicts with first (GET /v1/a/{id})")
	assert.Contains(t, err.Error(), "both match /v1/a/b")
	assert.NotContains(t, err.Error(), "{p0}", "the mux's names of the parameters stay inside")

	err = server.Get(api, "/v1/a/{x}", func(context.Context, struct {
		X string `path:"x" json:"-"`
	}) (struct{}, error) {
		return struct{}{}, nil
	}, server.OperationID("renamed"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already routed to first", "the same route, its parameter renamed")

	require.NoError(t, server.Post(api, "/v1/{id}/b", h, server.OperationID("other_method")), "another method does not conflict")
	require.NoError(t, server.Get(api, "/v1/a/b", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil },
		server.OperationID("literal")), "a more specific route does not conflict")
	require.NoError(t, server.Get(api, "/v1/{x}/{y}", h2, server.OperationID("wider")), "nor a less specific one")
	err = server.Get(api, "/v1/{id}/b", h, server.OperationID("second"))
	require.Error(t, err, "the refused route was not half registered")
	assert.Contains(t, err.Error(), "conflicts with first")

	srv := httptest.NewServer(api)
	defer srv.Close()
	for path, want := range map[string]int{"/v1/a/b": 200, "/v1/a/z": 200, "/v1/z/b": 200, "/v1/z/z": 200} {
		status, _, body := do(t, "GET", srv.URL+path, "", "")
		assert.Equal(t, want, status, "%s: %s", path, body)
	}
	assert.Len(t, api.Operations(), 4)
}

// Under GODEBUG=httpmuxgo121=1 ServeMux has neither methods nor wildcards: registration says
// so, instead of an API on which every request is a 404.
func TestRoutingRefusesGo121Mux(t *testing.T) {
	if os.Getenv("REMEDY_TEST_MUX121") == "1" {
		err := server.Get(newAPI(t), "/v1/orders/{id}", func(context.Context, oneIn) (struct{}, error) { return struct{}{}, nil })
		if err == nil {
			t.Fatal("registered under the Go 1.21 mux")
		}
		t.Log(err)
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRoutingRefusesGo121Mux$", "-test.v")
	cmd.Env = append(os.Environ(), "REMEDY_TEST_MUX121=1", "GODEBUG=httpmuxgo121=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "httpmuxgo121")
}
