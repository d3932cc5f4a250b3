package bench

import (
	"strings"
	"testing"
)

// TestServersAgree holds the three servers of BenchmarkServer to the same operation: each
// accepts the valid order and refuses each violation of a constraint.
func TestServersAgree(t *testing.T) {
	const item = `{"sku":"book-1","quantity":2,"price":12.5}`
	order := func(customer, email, currency, items, extra string) []byte {
		return []byte(`{"customer_id":"` + customer + `","email":"` + email + `","currency":"` + currency +
			`","items":[` + items + `]` + extra + `}`)
	}
	cases := []struct {
		name string
		body []byte
		ok   bool
	}{
		{"valid", validOrder, true},
		{"valid, minimal", order("cus_1", "a@b.co", "usd", item, ""), true},
		{"invalid: three violations", invalidOrder, false},
		{"pattern", order("cus_X", "a@b.co", "usd", item, ""), false},
		{"format", order("cus_1", "not an address", "usd", item, ""), false},
		{"enum", order("cus_1", "a@b.co", "USD", item, ""), false},
		{"minItems", order("cus_1", "a@b.co", "usd", "", ""), false},
		{"maxItems", order("cus_1", "a@b.co", "usd", strings.Repeat(item+",", 50)+item, ""), false},
		{"maxLength", order("cus_1", "a@b.co", "usd", item, `,"note":"`+strings.Repeat("é", 201)+`"`), false},
		{"minLength", order("cus_1", "a@b.co", "usd", `{"sku":"","quantity":2,"price":1}`, ""), false},
		{"minimum", order("cus_1", "a@b.co", "usd", `{"sku":"a","quantity":0,"price":1}`, ""), false},
		{"maximum", order("cus_1", "a@b.co", "usd", `{"sku":"a","quantity":101,"price":1}`, ""), false},
		{"negative price", order("cus_1", "a@b.co", "usd", `{"sku":"a","quantity":1,"price":-1}`, ""), false},
		{"type", order("cus_1", "a@b.co", "usd", `{"sku":"a","quantity":"2","price":1}`, ""), false},
		{"unknown field", order("cus_1", "a@b.co", "usd", item, `,"coupon":"x"`), false},
		{"not JSON", []byte(`{"customer_id":`), false},
	}
	for _, c := range serverContenders(t) {
		for _, tc := range cases {
			w := serve(c.h, tc.body, "")
			if ok := w.Code == 200; ok != tc.ok {
				t.Errorf("%s, %s: status %d, want success %v: %s", c.name, tc.name, w.Code, tc.ok, w.Body)
			}
			if !tc.ok && w.Code != 400 && w.Code != 422 {
				t.Errorf("%s, %s: status %d, want 400 or 422", c.name, tc.name, w.Code)
			}
		}
	}
}
