package frameworks

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/remedy-go/remedy"
)

// TestNetHTTP records net/http with encoding/json as Go's documentation shows a handler
// decoding a body: json.NewDecoder(r.Body).Decode(&v), then http.Error(w, err.Error(), 400).
// encoding/json states the kind that arrived and the Go type wanted, and the member's path
// with array indices dropped: a path through an array is not stated.
func TestNetHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		var v CreateItem
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	base := serve(t, mux)
	const d = remedy.DialectUnstructured
	run(t, base, []recording{
		{name: "nethttp-type", dialect: d, req: post("/items", typeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", code: "type", expected: `"integer"`}}}},
		// "Go struct field line.lines.quantity": the index of the line is not in the text.
		{name: "nethttp-nested-type", dialect: d, req: post("/items", nestedTypeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "type"}}}},
		{name: "nethttp-syntax", dialect: d, req: post("/items", syntaxBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "invalid_json"}}}},
		{name: "nethttp-truncated-json", dialect: d, req: post("/items", truncatedBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "invalid_json"}}}},
		{name: "nethttp-not-found", dialect: d, req: get("/nope"),
			want: want{status: 404, code: "not_found"}},
	})
}
