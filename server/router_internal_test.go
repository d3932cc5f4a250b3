package server

import (
	"net/http"
	"testing"
)

// What ServeMux.Handle panics with comes back from handle as an error, and leaves the mux
// serving what it had.
func TestHandleReturnsTheMuxPanic(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	if err := handle(mux, "GET /a/{p0}", &endpoint{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"GET /a/{p1}", "GET /{p0}/b/../c", "GET /{", "G(T /x", ""} {
		if err := handle(mux, bad, &endpoint{}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	r, _ := http.NewRequest("GET", "http://h/a/x", nil)
	if _, p := mux.Handler(r); p != "GET /a/{p0}" {
		t.Errorf("the mux lost its route: %q", p)
	}
}
