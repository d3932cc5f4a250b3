package remedyhuma_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/remedy-go/remedy"
	remedyhuma "github.com/remedy-go/remedy/huma"
)

// An existing Huma API gets remedy's contract from one call: its handler is unchanged, its
// validation errors become remedy's envelope, and the operation named in the options asks for
// confirmation first.
func Example() {
	type Order struct {
		Currency string `json:"currency" enum:"usd,eur"`
		Amount   int    `json:"amount" minimum:"1"`
	}
	type input struct{ Body Order }
	type output struct {
		Body struct {
			Status string `json:"status"`
		}
	}

	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("Orders", "1.0.0"))
	api, _ = remedyhuma.Install(api, remedyhuma.Options{Confirm: []string{"refund_order"}}) // the one added line
	huma.Register(api, huma.Operation{OperationID: "refund_order", Method: http.MethodPost, Path: "/v1/refunds"},
		func(ctx context.Context, in *input) (*output, error) {
			out := &output{}
			out.Body.Status = "refunded"
			return out, nil
		})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(body, token string) (*remedy.Envelope, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/refunds", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set(remedy.HeaderConfirmationToken, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		env, _ := remedy.Parse(resp.StatusCode, resp.Header, b)
		return env, resp.Status
	}

	env, status := post(`{"currency":"EUR","amount":0}`, "")
	fmt.Println(status, env.Code)
	for _, is := range env.Issues {
		fmt.Println(" ", is.Path, is.Code, string(is.Received))
	}
	env, status = post(`{"currency":"eur","amount":1200}`, "")
	fmt.Println(status, env.Code)
	_, status = post(`{"currency":"eur","amount":1200}`, env.ConfirmationToken)
	fmt.Println(status)
	// Output:
	// 422 Unprocessable Entity invalid_body
	//   /amount minimum 0
	//   /currency enum "EUR"
	// 409 Conflict confirmation_required
	// 200 OK
}
