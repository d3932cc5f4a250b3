package tools_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/scriptsrv"
	"github.com/remedy-go/remedy/tools"
)

// For every way a call through a Toolset ends, what the model reads holds no confirmation
// token the server issued in that run and no idempotency key the client sent — however the
// server spreads them through its words (message, hint, suggestions, issues, a later answer,
// a success's body), whatever the policy decides and wherever the limits stop the call. Each
// run is one call against a real server whose answers are drawn from a seeded generator; a
// failure names the seed.
func TestModelTextNeverHoldsASecret(t *testing.T) {
	t.Parallel()
	const runs = 300
	causes := map[string]int{}
	for seed := uint64(1); seed <= runs; seed++ {
		rng := rand.New(rand.NewPCG(seed, 34))
		var (
			mu     sync.Mutex
			issued []string // the tokens the server issued
			keys   []string // the idempotency keys it received
			seen   string   // every secret so far, for the server to echo
		)
		respond := func(w http.ResponseWriter, r *http.Request, n int) {
			mu.Lock()
			defer mu.Unlock()
			if k := r.Header.Get(remedy.HeaderIdempotencyKey); k != "" {
				keys = append(keys, k)
				seen += " " + k
			}
			token := fmt.Sprintf("tok_%d_%d_%x", seed, len(issued), rng.Uint64())
			echo := seen
			switch rng.IntN(11) {
			case 0:
				issued = append(issued, token)
				scriptsrv.Reply(w, 409, `{"error":{"code":"confirmation_required","message":"confirm with `+token+echo+`","hint":"`+token+`","suggestions":["`+token+`"],"confirmationToken":"`+token+`"}}`)
			case 1:
				scriptsrv.Reply(w, 503, `{"error":{"code":"unavailable","message":"busy`+echo+`","retryable":true,"retry_after_ms":1}}`)
			case 2:
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(500)
				fmt.Fprint(w, "oops"+echo)
			case 3:
				scriptsrv.Reply(w, 422, `{"error":{"code":"invalid_body","message":"bad`+echo+`","issues":[{"path":["amount"],"code":"maximum","message":"at most 10`+echo+`","expected":{"maximum":10}}]}}`)
			case 4:
				scriptsrv.Reply(w, 422, `{"error":{"code":"invalid_body","message":"bad","issues":[{"path":["currency"],"code":"enum","message":"one of`+echo+`","allowed_values":["usd","eur"],"received":"USD"}]}}`)
			case 5:
				scriptsrv.Reply(w, 409, `{"error":{"code":"confirmation_invalid","message":"spent`+echo+`"}}`)
			case 6:
				w.Header().Set("Retry-After", "3600")
				scriptsrv.Reply(w, 429, `{"error":{"code":"rate_limited","message":"slow down`+echo+`"}}`)
			case 7:
				scriptsrv.Reply(w, 412, `{"error":{"code":"precondition_failed","message":"first`+echo+`","next_operation":"verify_account"}}`)
			case 8:
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					conn.Close()
				}
			case 9:
				scriptsrv.Reply(w, 404, `{"error":{"code":"not_found","message":"none`+echo+`"}}`)
			default:
				scriptsrv.Reply(w, 200, `{"ok":true,"note":"`+strings.TrimSpace(echo)+`"}`)
			}
		}
		srv := scriptsrv.New(t, respond)
		approve := rng.IntN(2) == 0
		opts := []client.Option{
			client.WithOperations(modelTextOps...),
			client.WithLimits(client.Limits{MaxAttempts: 1 + rng.IntN(5)}),
			client.WithConfirmPolicy(client.ConfirmFunc(func(context.Context, *client.Challenge) (bool, error) { return approve, nil })),
		}
		c := newClient(t, srv, opts...)
		tool := []string{"create_invoice", "delete_customer", "get_invoice"}[rng.IntN(3)]
		args := []string{`{"id":"in_1","customer_id":"cus_1","amount":50,"currency":"USD"}`, `{"id":"cus_1"}`}[rng.IntN(2)]
		r, err := tools.ForClient(c, tools.Options{}).Invoke(context.Background(), tool, args)
		require.NoError(t, err, "seed %d", seed)

		mu.Lock()
		secrets := append(append([]string(nil), issued...), keys...)
		mu.Unlock()
		for _, s := range secrets {
			if strings.Contains(r.Output, s) || strings.Contains(r.Output, s[:12]) {
				t.Fatalf("seed %d: the model reads the secret %q (cause %v):\n%s", seed, s, cause(r.Err), r.Output)
			}
		}
		srv.Close()
		causes[fmt.Sprint(cause(r.Err))]++
	}
	t.Logf("ends: %v", causes)
}

func cause(err error) error {
	var ce *client.CallError
	if errors.As(err, &ce) {
		return ce.Cause
	}
	return err
}
