package frameworks

import (
	"net"
	"net/http"
	"testing"
)

// The Go frameworks' apps bind the same request: an item with a SKU, a currency from a list,
// a quantity with a maximum, and lines that repeat the SKU and quantity (a nested field inside
// an array). The tags are the ones each framework's validator reads: binding for gin,
// validate for echo's and fiber's go-playground/validator; json names the members.

// CreateItem is the request body the Go apps bind.
type CreateItem struct {
	SKU      string `json:"sku" binding:"required" validate:"required"`
	Currency string `json:"currency" binding:"required,oneof=usd eur" validate:"required,oneof=usd eur"`
	Quantity int    `json:"quantity" binding:"max=100" validate:"max=100"`
	Lines    []Line `json:"lines" binding:"dive" validate:"dive"`
}

type Line struct {
	SKU      string `json:"sku" binding:"required" validate:"required"`
	Quantity int    `json:"quantity" binding:"max=100" validate:"max=100"`
}

// ListQuery is the query the Go apps bind: a limit with a maximum.
type ListQuery struct {
	Limit int `form:"limit" query:"limit" binding:"max=100" validate:"max=100"`
}

// The failing requests every Go app answers.
var (
	enumBody       = `{"sku":"A1","currency":"gbp","quantity":1}`
	maximumBody    = `{"sku":"A1","currency":"usd","quantity":500}`
	requiredBody   = `{"currency":"usd","quantity":1}`
	typeBody       = `{"sku":"A1","currency":"usd","quantity":"ten"}`
	nestedBody     = `{"sku":"A1","currency":"usd","quantity":1,"lines":[{"sku":"B1","quantity":1},{"quantity":2}]}`
	nestedTypeBody = `{"sku":"A1","currency":"usd","quantity":1,"lines":[{"sku":"B1","quantity":"x"}]}`
	syntaxBody     = `{"sku":"A1",,}`
	truncatedBody  = `{"sku":"A1",`
)

func post(path, body string) request { return request{method: http.MethodPost, path: path, body: body} }
func get(path string) request        { return request{method: http.MethodGet, path: path} }

// serve runs h on a loopback port for the test's duration and returns its base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
