package server_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// Hostile inputs (issue 22): every answer is bounded, and so is the work that makes it.

// ItemRef names an item by a path parameter without a pattern: whatever the URL holds reaches
// the handler unless the pipeline refuses it.
type ItemRef struct {
	ID string `path:"id"`
}

// boundAPI is an API with the order operation (three required members, no others allowed),
// an item read that records the identifiers its handler receives, and a few more routes for
// the 404 suggestions to weigh.
func boundAPI(t testing.TB) (*server.API, *[]string) {
	t.Helper()
	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	require.NoError(t, server.Post(api, "/v1/orders", func(ctx context.Context, in CreateOrder) (Order, error) {
		return Order{ID: "ord_a", Status: "created", Currency: in.Currency, Items: in.Items}, nil
	}, server.OperationID("create_order")))
	require.NoError(t, server.Get(api, "/v1/items/{id}", func(ctx context.Context, in ItemRef) (ItemRef, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, in.ID)
		return in, nil
	}, server.OperationID("get_item")))
	require.NoError(t, server.Post(api, "/v1/items/{id}/archive", func(ctx context.Context, in ItemRef) (ItemRef, error) {
		return in, nil
	}, server.OperationID("archive_item")))
	require.NoError(t, server.Get(api, "/v1/orders/{id}", func(ctx context.Context, in ShipOrder) (ShipOrder, error) {
		return in, nil
	}, server.OperationID("get_order")))
	return api, &seen
}

// manyMembers is a body of about size bytes, {"0":0,"1":0,...}, and how many members it has,
// every one of them unknown.
func manyMembers(size int) ([]byte, int) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for ; b.Len() < size-16; n++ {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strconv.Itoa(n) + `":0`)
	}
	b.WriteByte('}')
	return b.Bytes(), n
}

// manyItems is an order whose n items each break two rules.
func manyItems(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"customer_id":"cus_1","currency":"usd","items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"sku":"","quantity":0}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// measured is what one request cost the process: bytes allocated, allocations, and the answer.
type measured struct {
	bytes, mallocs uint64
	status         int
	header         http.Header
	body           []byte
}

// measure sends one request over srv and reads what the process allocated meanwhile (the
// client's side included). It must not run beside other tests.
func measure(t *testing.T, method, url, body string) measured {
	t.Helper()
	do(t, method, url, "application/json", body) // warm: connections, caches
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	status, h, b := do(t, method, url, "application/json", body)
	runtime.ReadMemStats(&after)
	return measured{after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs, status, h, b}
}

// Row 7: a 1 MiB body of 111,846 unknown members was answered with 111,849 issues (23.9 MB)
// after seconds of work. The answer now has one issue for all the unknown members, and the
// work is bounded by a small multiple of the body.
func TestManyUnknownMembersBounded(t *testing.T) {
	api, _ := boundAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	body, members := manyMembers(1 << 20)
	m := measure(t, "POST", srv.URL+"/v1/orders", string(body))
	env := envelope(t, m.status, m.header, m.body)
	assert.Equal(t, 422, m.status)
	assert.Equal(t, "invalid_body", env.Code)
	assert.LessOrEqual(t, len(env.Issues), 101)
	assert.Less(t, len(m.body), 8<<10, "the answer is a few KB")
	var unknown *remedy.Issue
	for i, is := range env.Issues {
		if is.Code == "additional_properties" {
			require.Nil(t, unknown, "one issue for all the unknown members: %s", m.body)
			unknown = &env.Issues[i]
		}
	}
	require.NotNil(t, unknown, "%s", m.body)
	assert.Equal(t, "", unknown.Path, "the object that refuses them")
	assert.Contains(t, unknown.Message, strconv.Itoa(members)+" properties that are not allowed: '0', '1', '2'")
	assert.Contains(t, unknown.Message, "'9' and "+strconv.Itoa(members-10)+" more")
	t.Logf("body %d bytes: allocated %d bytes in %d allocations, answered %d bytes", len(body), m.bytes, m.mallocs, len(m.body))
	// About 35 bytes a byte of body, most of it the decoded body; it was over 200 when every
	// member had an issue.
	assert.Less(t, m.bytes, uint64(48*len(body)), "bytes allocated")
	assert.Less(t, m.mallocs, uint64(len(body)/2), "allocations")
}

// Issues past the bound are not built, and the values after them are not validated: the
// marker says how many more issues were found at least.
func TestTooManyIssuesBounded(t *testing.T) {
	api, _ := boundAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	const n = 20000
	body := manyItems(n)
	m := measure(t, "POST", srv.URL+"/v1/orders", string(body))
	env := envelope(t, m.status, m.header, m.body)
	assert.Equal(t, 422, m.status)
	require.Len(t, env.Issues, 101, "100 issues and the marker")
	last := env.Issues[100]
	assert.Equal(t, "too_many_issues", last.Code)
	assert.Equal(t, "", last.Path)
	assert.Contains(t, last.Message, "at least 1 more issue found")
	// The first hundred in order: items 0 to 49, quantity before sku.
	assert.Equal(t, "/items/0/quantity", env.Issues[0].Path)
	assert.Equal(t, "/items/49/sku", env.Issues[99].Path)
	assert.True(t, strings.HasPrefix(env.Message, "at least 101 issues: "), env.Message)
	assert.Less(t, len(m.body), 64<<10)
	t.Logf("body %d bytes: allocated %d bytes in %d allocations, answered %d bytes", len(body), m.bytes, m.mallocs, len(m.body))
	// About 25 bytes a byte of body, most of it the decoded body; it was 85 when the schema
	// validator walked every item, and over 200 when every issue was built.
	assert.Less(t, m.bytes, uint64(40*len(body)), "bytes allocated")
}

// Six of the worst bodies at once are each answered in bounded space.
func TestManyUnknownMembersConcurrent(t *testing.T) {
	api, _ := boundAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	b, _ := manyMembers(1 << 20)
	body := string(b)
	var wg sync.WaitGroup
	sizes := make([]int, 6)
	for i := range sizes {
		wg.Go(func() {
			status, _, b := do(t, "POST", srv.URL+"/v1/orders", "application/json", body)
			assert.Equal(t, 422, status)
			sizes[i] = len(b)
		})
	}
	wg.Wait()
	for _, n := range sizes {
		assert.Less(t, n, 8<<10)
	}
}

// Row 11: path parameters that decode to dot segments, slashes or control bytes are refused
// before the handler runs, naming the parameter.
func TestPathParameterTraversalRefused(t *testing.T) {
	t.Parallel()
	api, seen := boundAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	for _, path := range []string{
		"/v1/items/..%2f..%2fetc%2fpasswd",
		"/v1/items/..%2F..%2Fetc%2Fpasswd",
		"/v1/items/%2e%2e",
		"/v1/items/%2E",
		"/v1/items/a%00b",
		"/v1/items/a%0ab",
		"/v1/items/a%7fb",
		"/v1/items/a%2fb",
		"/v1/items/..%5c..%5cwin.ini",
		"/v1/items/%ff",
		"/v1/items/..%2f/archive",
	} {
		t.Run(path, func(t *testing.T) {
			method := "GET"
			if strings.HasSuffix(path, "/archive") {
				method = "POST"
			}
			req, err := http.NewRequest(method, srv.URL+"/", nil)
			require.NoError(t, err)
			req.URL.Opaque = path // sent as written, not cleaned
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			var buf bytes.Buffer
			_, err = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			env := envelope(t, resp.StatusCode, resp.Header, buf.Bytes())
			assert.Equal(t, 400, resp.StatusCode, "%s", buf.Bytes())
			assert.Equal(t, "invalid_parameter", env.Code)
			require.Len(t, env.Issues, 1)
			assert.Equal(t, "/id", env.Issues[0].Path)
			assert.Equal(t, "invalid_path_segment", env.Issues[0].Code)
			assert.NotContains(t, buf.String(), "\\u0000")
		})
	}
	assert.Empty(t, *seen, "no handler ran")
	// An ordinary identifier still passes, escaped characters included.
	status, _, body := do(t, "GET", srv.URL+"/v1/items/a%20b.c", "", "")
	assert.Equal(t, 200, status, "%s", body)
	assert.Equal(t, []string{"a b.c"}, *seen)
}

// Row 13: a 404 on a huge path neither echoes it nor costs much more than reading it.
func TestNotFoundHugePathBounded(t *testing.T) {
	api, _ := boundAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	for _, path := range []string{
		"/v1/" + strings.Repeat("a/", 450_000),
		"/v1/order/" + strings.Repeat("x", 900_000),
		strings.Repeat("/", 900_000),
	} {
		m := measure(t, "GET", srv.URL+path, "")
		env := envelope(t, m.status, m.header, m.body)
		assert.Equal(t, 404, m.status)
		assert.Equal(t, "not_found", env.Code)
		assert.Less(t, len(m.body), 2<<10, "the path is not echoed")
		assert.Less(t, len(env.Message), 300)
		t.Logf("path %d bytes: allocated %d bytes in %d allocations, answered %d bytes", len(path), m.bytes, m.mallocs, len(m.body))
		// About 9 bytes a byte of path, for reading the request on both sides; 44 when the
		// suggestions split the whole path for every operation.
		assert.Less(t, m.bytes, uint64(11*len(path)), "bytes allocated")
	}
	// A near miss is still suggested, from a bounded prefix of the path.
	status, h, body := do(t, "GET", srv.URL+"/v1/order/"+strings.Repeat("x", 900_000), "", "")
	env := envelope(t, status, h, body)
	assert.Contains(t, env.Suggestions, "GET /v1/orders/{id} (get_order)")
	status, h, body = do(t, "GET", srv.URL+"/v1/item/ab", "", "")
	env = envelope(t, status, h, body)
	assert.Equal(t, 404, status)
	assert.Equal(t, "GET /v1/items/{id} (get_item)", env.Suggestions[0])
}

// BenchmarkHostileBody is the worst body of issue 22 through the whole pipeline: 1 MiB of
// unknown members, and an order with 20,000 invalid items. bytes/answer is the size of the
// envelope sent back.
func BenchmarkHostileBody(b *testing.B) {
	api, _ := boundAPI(b)
	for _, bc := range []struct {
		name string
		body []byte
	}{
		{"ManyMembers1MiB", func() []byte { b, _ := manyMembers(1 << 20); return b }()},
		{"ManyItems", manyItems(20000)},
	} {
		b.Run(bc.name, func(b *testing.B) { benchPost(b, api, "/v1/orders", bc.body) })
	}
	hostile := hostileAPI(b)
	for _, s := range hostileShapes() {
		b.Run(s.name, func(b *testing.B) { benchPost(b, hostile, "/v1/batches", s.body) })
	}
}

// benchPost posts body to path, expecting 422, and reports the size of the answer.
func benchPost(b *testing.B, api http.Handler, path string, body []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	var answer int
	for b.Loop() {
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		if w.Code != 422 {
			b.Fatalf("status %d: %.300s", w.Code, w.Body)
		}
		answer = w.Body.Len()
	}
	b.ReportMetric(float64(answer), "bytes/answer")
}

// TestHandlerIssuesBounded: a handler's own envelope, with 500 issues, is answered with the
// first MaxIssues and one marker counting the rest, as validation's are; the handler's slice
// is left as it was.
func TestHandlerIssuesBounded(t *testing.T) {
	t.Parallel()
	issues := make([]remedy.Issue, 500)
	for i := range issues {
		issues[i] = remedy.Issue{Path: "/items/" + strconv.Itoa(i), Code: "out_of_stock", Message: "out of stock"}
	}
	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Get(api, "/v1/items/{id}", func(ctx context.Context, in ItemRef) (ItemRef, error) {
		return ItemRef{}, &remedy.Envelope{Status: 409, Code: "conflict", Message: "out of stock", Issues: issues}
	}, server.OperationID("get_item")))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + "/v1/items/a")
	require.NoError(t, err)
	env, ok := remedy.ParseResponse(resp)
	resp.Body.Close()
	require.True(t, ok)
	require.Len(t, env.Issues, server.MaxIssues+1)
	assert.Equal(t, "/items/99", env.Issues[server.MaxIssues-1].Path)
	last := env.Issues[server.MaxIssues]
	assert.Equal(t, server.TooManyIssues, last.Code)
	assert.Contains(t, last.Message, "400 more issues")
	assert.Len(t, issues, 500)
	assert.Equal(t, "out_of_stock", issues[server.MaxIssues].Code, "the handler's issues are not modified")
}
