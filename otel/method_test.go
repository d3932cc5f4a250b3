package remedyotel_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/remedy-go/remedy/client"
)

// Made-up methods, "get" among them (methods are case-sensitive), make no span name and no
// http.request.method of their own: each is "HTTP" and _OTHER, with the method it was in
// http.request.method_original; the known ones stay as they are. A client's operation with
// such a method is said the same way.
func TestUnknownMethods(t *testing.T) {
	r := newRig(t)
	sent := []string{"get"}
	for i := range 200 {
		sent = append(sent, fmt.Sprintf("M%d", i))
	}
	for _, m := range append([]string{http.MethodGet, "QUERY"}, sent...) {
		req, err := http.NewRequest(m, r.srv.URL+"/v1/reports/revenue?currency=usd", nil)
		require.NoError(t, err)
		resp, err := r.srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.NoError(t, r.client.Register(client.Operation{Name: "propfind", Method: "PROPFIND", Path: "/v1/invoices"}))
	_, err := r.client.Call(context.Background(), "propfind", nil)
	require.Error(t, err, "no operation answers PROPFIND")
	spans := r.ended()

	names := map[string]bool{}
	values := map[string]bool{}
	original := map[string]bool{}
	var c []string
	for _, s := range spans {
		v, ok := attr(s, "http.request.method")
		if !ok {
			continue
		}
		values[v.Emit()] = true
		o, hasOriginal := attr(s, "http.request.method_original")
		assert.Equal(t, v.Emit() == "_OTHER", hasOriginal, "span %q: method_original with _OTHER only", s.Name())
		switch {
		case s.SpanKind() == trace.SpanKindClient:
			c = append(c, s.Name()+" "+v.Emit()+" "+o.Emit())
		case v.Emit() == "_OTHER":
			assert.Equal(t, "HTTP", s.Name())
			original[o.Emit()] = true
		case v.Emit() == http.MethodGet:
			assert.Equal(t, "GET /v1/reports/revenue", s.Name())
		default:
			assert.Equal(t, v.Emit(), s.Name(), "a known method names its span, routed or not")
		}
		names[s.Name()] = true
	}
	assert.LessOrEqual(t, len(names), 4, "span names: %v", keys(names))
	assert.LessOrEqual(t, len(values), 4, "http.request.method values: %v", keys(values))
	assert.True(t, values["GET"] && values["QUERY"] && values["_OTHER"], "%v", keys(values))
	var missing []string
	for _, m := range sent {
		if !original[m] {
			missing = append(missing, m)
		}
	}
	assert.Empty(t, missing, "methods no server span says in http.request.method_original")
	assert.Equal(t, []string{"HTTP _OTHER PROPFIND"}, c, "the client's attempt span")
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
