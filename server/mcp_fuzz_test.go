package server

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"testing"
)

type fuzzToolIn struct {
	Account string   `path:"account" json:"-"`
	ID      int      `path:"id" json:"-"`
	Tags    []string `query:"tag" json:"-"`
	Note    string   `json:"note,omitempty"`
}

// FuzzToolRequest: any arguments of a tool call either map to a request that routes back to
// the tool's operation, with every path parameter in its segment and a body that is a JSON
// object (or none), or are refused with a problem — never a panic.
func FuzzToolRequest(f *testing.F) {
	a, err := New()
	if err != nil {
		f.Fatal(err)
	}
	h := func(ctx context.Context, in fuzzToolIn) (struct{}, error) { return struct{}{}, nil }
	if err := Patch(a, "/v1/{account}/items/{id}", h, OperationID("edit"), Confirm(), Idempotent()); err != nil {
		f.Fatal(err)
	}
	op := a.ops[0]
	for _, s := range []string{
		`{"account":"a b/c","id":7,"tag":["x","y"],"note":"hi","confirmationToken":"t","idempotencyKey":"k"}`,
		`{"account":"..","id":1}`, `{"account":"acc","id":{"x":1}}`, `{"account":"acc"}`, `[]`, `null`, ``,
		`{"account":"acc","id":1,"id":2}`, `{"account":"%2F","id":-1e400,"tag":null}`, `{"idempotencyKey":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		req, err := op.toolRequest(context.Background(), args, nil)
		if req == nil {
			t.Fatalf("no request: %v", err)
		}
		if err != nil {
			if _, ok := err.(*Problem); !ok {
				t.Fatalf("not a problem: %T %v", err, err)
			}
			return
		}
		got, vals := a.routes.match(req, nil)
		if got != op {
			t.Fatalf("%s %s does not route back to the operation", req.Method, req.URL.EscapedPath())
		}
		var in map[string]any
		json.Unmarshal(args, &in)
		for i, name := range []string{"account", "id"} {
			got, err := url.PathUnescape(vals[i])
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := in[name].(string); ok && got != s {
				t.Fatalf("path parameter %s = %q, want %q", name, got, s)
			}
		}
		if req.Body != nil {
			b, _ := io.ReadAll(req.Body)
			var obj map[string]any
			if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
				t.Fatalf("the body is not a JSON object: %q", b)
			}
			for _, k := range []string{"account", "id", "tag", "confirmationToken", "idempotencyKey"} {
				if _, ok := obj[k]; ok {
					t.Fatalf("%s stayed in the body", k)
				}
			}
		}
		if strings.Contains(req.URL.RawQuery, "confirmationToken") {
			t.Fatal("the token went into the query")
		}
	})
}
