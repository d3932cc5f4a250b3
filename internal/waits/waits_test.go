package waits

import (
	"net/http"
	"net/textproto"
	"testing"
	"time"
)

// TestResetHeadersCanonical: Reset looks the headers up in the map directly, so their names
// must be the canonical keys net/http stores; a header set in any spelling is found.
func TestResetHeadersCanonical(t *testing.T) {
	for _, name := range resetHeaders {
		if c := textproto.CanonicalMIMEHeaderKey(name); c != name {
			t.Errorf("%q is not canonical (%q)", name, c)
		}
	}
	for _, spelling := range []string{"RateLimit-Reset", "x-ratelimit-reset", "X-RATE-LIMIT-RESET"} {
		h := http.Header{}
		h.Set(spelling, "7")
		if w := Reset(h, ""); !w.OK || w.D != 7*time.Second {
			t.Errorf("%s: 7 read as %+v", spelling, w)
		}
	}
}
