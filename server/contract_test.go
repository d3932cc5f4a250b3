package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/server"
)

// Every code the registry holds, emitted by a real request, reads back with remedy.Parse as
// the same code, status, retryable and issues, in both encodings.
func TestEveryCodeRoundTrips(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	require.NoError(t, reg.Register(server.Code{Code: "card_declined", Status: 402, Category: remedy.CategoryState,
		Hint: "Use another card.", Cause: "The card was declined.", Repair: "Ask for another payment method."}))
	api, err := server.New(server.WithRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	issue := remedy.Issue{Path: "/items/0/sku", Code: "enum", Message: "sku must be one of a, b",
		AllowedValues: []json.RawMessage{json.RawMessage(`"a"`), json.RawMessage(`"b"`)}, SuggestedValue: json.RawMessage(`"a"`)}
	require.NoError(t, server.Post(api, "/v1/fail", func(ctx context.Context, in Fail) (struct{}, error) {
		p := server.Error(in.Code, "emitted on purpose")
		p.Issues = []remedy.Issue{issue}
		return struct{}{}, p
	}, server.OperationID("fail")))
	srv := httptest.NewServer(api)
	defer srv.Close()

	codes := reg.Codes()
	require.GreaterOrEqual(t, len(codes), 14)
	for _, c := range codes {
		for _, accept := range []string{"application/json", "application/problem+json"} {
			t.Run(c.Code+"/"+accept, func(t *testing.T) {
				status, h, body := do(t, "POST", srv.URL+"/v1/fail", "application/json", `{"code":"`+c.Code+`"}`, "Accept", accept)
				env := envelope(t, status, h, body)
				assert.Equal(t, c.Status, status)
				assert.Equal(t, c.Code, env.Code)
				assert.Equal(t, c.Status, env.Status)
				assert.Equal(t, c.Retryable, env.Retryable, "%s", body)
				assert.Equal(t, remedy.RetryFromBody, env.RetrySource)
				assert.Equal(t, c.Category, env.Category)
				assert.Equal(t, "emitted on purpose", env.Message)
				require.Len(t, env.Issues, 1, "%s", body)
				got := env.Issues[0]
				assert.Equal(t, issue.Path, got.Path)
				assert.Equal(t, issue.Code, got.Code)
				assert.Equal(t, issue.AllowedValues, got.AllowedValues)
				assert.JSONEq(t, string(issue.SuggestedValue), string(got.SuggestedValue))
			})
		}
	}
}
