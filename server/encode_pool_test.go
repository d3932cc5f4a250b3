package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestRefusalBuffersShareNothing: refusals are encoded into pooled buffers; under many
// concurrent invalid requests, each answer holds its own request's values and no byte of
// another's, and its Content-Length is its own length.
func TestRefusalBuffersShareNothing(t *testing.T) {
	t.Parallel()
	_, _, srv := billingServer(t)
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// A long memo for some, a short one for others: a reused buffer that kept a longer
			// answer's tail would show it.
			memo := strings.Repeat(fmt.Sprintf("m%03d", i), 1+(i%3)*60)
			body := fmt.Sprintf(`{"customer_id":"cus_ada","currency":"usd","amount":%d,"memo":%q}`, 2000000+i, memo)
			status, h, got := do(t, "POST", srv.URL+"/v1/invoices", "application/json", body)
			if status != 422 {
				t.Errorf("request %d: status %d: %s", i, status, got)
				return
			}
			if cl := h.Get("Content-Length"); cl != fmt.Sprint(len(got)) {
				t.Errorf("request %d: Content-Length %s for %d bytes", i, cl, len(got))
			}
			if !strings.Contains(string(got), fmt.Sprint(2000000+i)) {
				t.Errorf("request %d: its own amount is not in its answer: %s", i, got)
			}
			for j := range n {
				if j != i && strings.Contains(string(got), fmt.Sprintf("m%03d", j)) || j != i && strings.Contains(string(got), fmt.Sprint(2000000+j)) {
					t.Errorf("request %d: answer holds request %d's values: %s", i, j, got)
				}
			}
		})
	}
	wg.Wait()
}
