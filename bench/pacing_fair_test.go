package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPacing runs the quick workload through remedy's default client against both servers
// and holds it to issue 38's goals that do not depend on the machine's speed: every call
// completes, nothing is sent after the client knew of a reset still ahead, and the server's
// and the client's counts agree. It takes a few seconds: real sockets, real one-second
// windows. Time is reported, never asserted.
func TestPacing(t *testing.T) {
	if testing.Short() {
		t.Skip("real one-second windows")
	}
	scale := pacingScales["quick"]
	for _, v := range pacingVariants {
		for _, c := range remedyPacingContenders() {
			if c.name != "remedy" {
				continue
			}
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				f := runPacing(t, scale, v.rateLimitFields, c)
				t.Logf("%d of %d calls, %d requests, %d refused, %d after a known reset, %v (floor %v)",
					f.Completed, f.Calls, f.Requests, f.Refused, f.AfterReset, f.Total, f.Floor)
				checkPacing(t, f, true)
			})
		}
	}
}

// TestLimitServer holds the server to what it states: the limit per key and window, then 429
// with Retry-After in whole seconds rounded up, and with rateLimitFields the IETF draft's
// fields and the older ones on every answer. The window is an hour, so that no window ends
// during the test.
func TestLimitServer(t *testing.T) {
	scale := pacingScale{Callers: 1, Calls: 1, Limit: 2, Window: time.Hour}
	for _, fields := range []bool{false, true} {
		ls := newLimitServer(scale, fields)
		srv := httptest.NewServer(ls)
		t.Cleanup(srv.Close)
		send := func(key string) *http.Response {
			req, _ := http.NewRequest("POST", srv.URL+"/v1/orders", strings.NewReader("{}"))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp
		}
		for i, want := range []struct {
			key                   string
			status                int
			retryAfter, ratelimit string
		}{
			{"a", 200, "", `"per-key";r=1;t=3600`},
			{"a", 200, "", `"per-key";r=0;t=3600`},
			{"a", 429, "3600", `"per-key";r=0;t=3600`},
			{"b", 200, "", `"per-key";r=1;t=3600`},
		} {
			resp := send(want.key)
			h := resp.Header
			if resp.StatusCode != want.status || h.Get("Retry-After") != want.retryAfter {
				t.Errorf("fields %v, request %d: %d, Retry-After %q; want %d, %q", fields, i, resp.StatusCode, h.Get("Retry-After"), want.status, want.retryAfter)
			}
			if !fields {
				if h.Get("RateLimit") != "" || h.Get("RateLimit-Remaining") != "" {
					t.Errorf("request %d: RateLimit fields from the server that states none: %v", i, h)
				}
				continue
			}
			if h.Get("RateLimit") != want.ratelimit || h.Get("RateLimit-Policy") != `"per-key";q=2;w=3600` ||
				h.Get("RateLimit-Reset") != "3600" || h.Get("RateLimit-Limit") != "2" {
				t.Errorf("request %d: %v", i, h)
			}
		}
	}
}

// TestPacingCounts holds the count of requests sent after a known reset to what it means, on
// a window of an hour (so that no wait ends during the test): one caller, three calls, one
// request admitted. A client that does not pace sends its third call after it read the
// second's refusal, announcing a reset an hour ahead (so does remedy with WithPacer(nil));
// remedy's pacer holds the origin, and a wait of an hour, past the longest wait, stops the
// call at once with nothing sent.
func TestPacingCounts(t *testing.T) {
	scale := pacingScale{Callers: 1, Calls: 3, Limit: 1, Window: time.Hour}
	plain := pacingContender{name: "net-http", setup: func(_ testing.TB, hc *http.Client, base string, _ time.Time) func(context.Context, int) error {
		return func(ctx context.Context, n int) error {
			req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/orders", bytes.NewReader(orderArgs))
			if err != nil {
				return err
			}
			setOrderHeaders(req.Header, n)
			return readOrder(hc.Do(req))
		}
	}}
	contenders := map[string]pacingContender{"net-http": plain}
	for _, c := range remedyPacingContenders() {
		contenders[c.name] = c
	}
	for _, tc := range []struct {
		contender                                string
		completed, requests, refused, afterReset int
	}{
		{"net-http", 1, 3, 2, 1},
		{"remedy", 1, 2, 1, 0},
		{"remedy-nopacer", 1, 3, 2, 1},
	} {
		t.Run(tc.contender, func(t *testing.T) {
			f := runPacing(t, scale, false, contenders[tc.contender])
			checkPacing(t, f, false)
			if f.Completed != tc.completed || f.Requests != tc.requests || f.Refused != tc.refused || f.AfterReset != tc.afterReset {
				t.Errorf("%d completed, %d requests, %d refused, %d after a known reset; want %d, %d, %d, %d",
					f.Completed, f.Requests, f.Refused, f.AfterReset, tc.completed, tc.requests, tc.refused, tc.afterReset)
			}
		})
	}
}

// TestPacingTwoProcesses runs the quick workload through remedy-redis-2proc — two processes,
// each with a redispacer.Pacer of its own on one redis-server — against the server that states
// its limit on every answer, and holds it to TestPacing's invariants: what one process learns
// reaches the other's calls through Redis alone, in time for none of them to be sent after a
// known reset. It skips when redis-server is not installed (unless REMEDY_REQUIRE_REDIS=1).
func TestPacingTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("real one-second windows")
	}
	scale := pacingScales["quick"]
	f := runPacing(t, scale, true, twoProcessPacingContender())
	t.Logf("%d of %d calls, %d requests, %d refused, %d after a known reset, %v (floor %v)",
		f.Completed, f.Calls, f.Requests, f.Refused, f.AfterReset, f.Total, f.Floor)
	checkPacing(t, f, true)
}
