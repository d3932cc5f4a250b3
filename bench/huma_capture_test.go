package bench

import (
	"bytes"
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

var capture = flag.Bool("capture", false, "rewrite the huma responses recorded in ../testdata/envelopes/rfc9457")

// humaCaptureDir is where the recorded responses live: huma answers with RFC 9457 problem
// details, so Parse reads them as that dialect.
var humaCaptureDir = filepath.Join("..", "testdata", "envelopes", "rfc9457")

type humaItem struct {
	SKU  string   `json:"sku" pattern:"^[A-Z]{3}-[0-9]{4}$"`
	Qty  int      `json:"qty" minimum:"1" maximum:"99"`
	Tags []string `json:"tags,omitempty" enum:"gift_wrap,fragile,express"`
}

type humaOrder struct {
	CustomerID string     `json:"customer_id" pattern:"^cus_[a-z0-9]+$"`
	Currency   string     `json:"currency" enum:"usd,eur,gbp"`
	Items      []humaItem `json:"items" minItems:"1" maxItems:"3"`
	Note       string     `json:"note,omitempty" maxLength:"20"`
}

type humaCreateInput struct {
	Tenant string `header:"X-Tenant" required:"true" pattern:"^t_[a-z]+$"`
	Body   humaOrder
}

type humaListInput struct {
	Store   string `path:"store" pattern:"^st_[0-9]+$"`
	Limit   int    `query:"limit" minimum:"1" maximum:"100" default:"20"`
	Status  string `query:"status" enum:"open,shipped,cancelled"`
	Session string `cookie:"session" minLength:"8"`
}

type humaOutput struct{ Body struct{ OK bool } }

// humaAPI registers two operations with huma's validation tags: a body with a pattern, an enum,
// bounds and an item limit, a required header with a pattern; a path parameter with a pattern,
// a bounded query parameter, an enum query parameter and a cookie.
func humaAPI() http.Handler {
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("Orders", "1.0.0"))
	huma.Register(api, huma.Operation{OperationID: "create-order", Method: http.MethodPost, Path: "/v1/orders"},
		func(ctx context.Context, in *humaCreateInput) (*humaOutput, error) { return &humaOutput{}, nil })
	huma.Register(api, huma.Operation{OperationID: "list-orders", Method: http.MethodGet, Path: "/v1/stores/{store}/orders"},
		func(ctx context.Context, in *humaListInput) (*humaOutput, error) { return &humaOutput{}, nil })
	return mux
}

// humaCases are the failing requests whose answers the corpus records.
var humaCases = []struct {
	name, method, target, body string
	header                     map[string]string
}{
	{
		name: "huma-body-validation", method: http.MethodPost, target: "/v1/orders",
		header: map[string]string{"X-Tenant": "t_acme", "Content-Type": "application/json"},
		body: `{"customer_id":"CUS-9","currency":"USD","items":[{"sku":"ABC-0001","qty":0},` +
			`{"sku":"abc1","qty":2},{"sku":"ABC-0003","qty":1},{"sku":"ABC-0004","qty":1,"tags":["Gift-Wrap"]}],` +
			`"note":"please leave it at the door"}`,
	},
	{
		name: "huma-body-missing-required-and-type", method: http.MethodPost, target: "/v1/orders",
		header: map[string]string{"X-Tenant": "t_acme", "Content-Type": "application/json"},
		body:   `{"currency":"eur","items":[{"sku":"ABC-0001","qty":"two"}]}`,
	},
	{
		name: "huma-header-parameter", method: http.MethodPost, target: "/v1/orders",
		header: map[string]string{"X-Tenant": "ACME", "Content-Type": "application/json"},
		body:   `{"customer_id":"cus_9","currency":"eur","items":[{"sku":"ABC-0001","qty":1}]}`,
	},
	{
		name: "huma-body-required", method: http.MethodPost, target: "/v1/orders",
		header: map[string]string{"X-Tenant": "t_acme", "Content-Type": "application/json"},
	},
	{
		name: "huma-body-malformed-json", method: http.MethodPost, target: "/v1/orders",
		header: map[string]string{"X-Tenant": "t_acme", "Content-Type": "application/json"},
		body:   `{"customer_id":"cus_9",`,
	},
	{
		name: "huma-path-query-cookie-parameters", method: http.MethodGet,
		target: "/v1/stores/store-7/orders?limit=500&status=closed",
		header: map[string]string{"Cookie": "session=abc"},
	},
	{
		name: "huma-query-not-an-integer", method: http.MethodGet,
		target: "/v1/stores/st_7/orders?limit=ten",
	},
}

// TestHumaCapture sends each failing request to a real huma v2 API and checks that the corpus
// records the answer byte for byte (its status, its headers and its body), so that the huma
// responses under testdata are what huma sends, not what we remember of it. With -capture it
// rewrites them instead (then regenerate the root module's golden files).
func TestHumaCapture(t *testing.T) {
	h := humaAPI()
	for _, c := range humaCases {
		t.Run(c.name, func(t *testing.T) {
			var body *strings.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			req := httptest.NewRequest(c.method, "http://api.example.com"+c.target, nil)
			if body != nil {
				req = httptest.NewRequest(c.method, "http://api.example.com"+c.target, body)
			}
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code < 400 {
				t.Fatalf("huma accepted the request: %d %s", rec.Code, rec.Body)
			}
			got := corpus.FormatHTTP(rec.Code, rec.Header(), rec.Body.Bytes())
			path := filepath.Join(humaCaptureDir, c.name+".http")
			if *capture {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run HumaCapture -capture)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("huma's answer changed; recorded:\n%s\nnow:\n%s", want, got)
			}
		})
	}
}
