package frameworks

import (
	"context"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/interop/frameworks/ogenitems"
)

// ogenItems is the app's side of the server ogen generated from ogenitems/openapi.json: it
// accepts every request that gets through ogen's decoding and validation.
type ogenItems struct{}

func (ogenItems) CreateItem(context.Context, *ogenitems.CreateItem) error    { return nil }
func (ogenItems) ListItems(context.Context, ogenitems.ListItemsParams) error { return nil }

// TestOgen records ogen v1.24.0's generated server with its default error handler
// (ogenerrors.DefaultErrorHandler: {"error_message": err.Error()}). Its validation names
// members and array items; its decoder's failures inside a member drop array indices (the
// path is not read), and a JSON value of the wrong type is a syntax error there that names
// no type (not read). An integer bound's text is the same for maximum and an exclusive
// maximum: only the value that arrived is read.
func TestOgen(t *testing.T) {
	srv, err := ogenitems.NewServer(ogenItems{})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, srv)
	const d = remedy.DialectGenericJSON
	run(t, base, []recording{
		{name: "ogen-enum", dialect: d, req: post("/items", enumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/currency", code: "enum"}}}},
		{name: "ogen-maximum", dialect: d, req: post("/items", maximumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", received: "500"}}}},
		{name: "ogen-required", dialect: d, req: post("/items", requiredBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/sku", code: "required"}}}},
		// "decode field \"quantity\": unexpected byte 34 '\"' at 40": a value of another kind
		// than the member's, whose type is not said.
		{name: "ogen-type", dialect: d, req: post("/items", typeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", code: "type"}}}},
		// The members' decoders drop the array's index: the field is named, not located.
		{name: "ogen-nested-type", dialect: d, req: post("/items", nestedTypeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "type"}}}},
		{name: "ogen-nested-required", dialect: d, req: post("/items", nestedBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "required"}}}},
		{name: "ogen-nested-maximum", dialect: d, req: post("/items", `{"sku":"A1","currency":"usd","quantity":1,"lines":[{"sku":"B1","quantity":1},{"sku":"B2","quantity":500}]}`),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/lines/1/quantity", received: "500"}}}},
		{name: "ogen-query-maximum", dialect: d, req: get("/items?limit=500"),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/limit", received: "500"}}}},
		{name: "ogen-query-type", dialect: d, req: get("/items?limit=ten"),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/limit", code: "type", expected: `"integer"`, received: `"ten"`}}}},
		{name: "ogen-invalid-json", dialect: d, req: post("/items", syntaxBody),
			want: want{status: 400, code: "bad_request"}},
		{name: "ogen-not-found", dialect: remedy.DialectUnstructured, req: get("/nope"),
			want: want{status: 404, code: "not_found"}},
	})
}
