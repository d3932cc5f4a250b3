package httpop

import "testing"

func TestName(t *testing.T) {
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/", "get"},
		{"GET", "/v1/orders/{order-id}", "get_v1_orders_order_id"},
		{"POST", "/v1/Orders/{id}/cancel", "post_v1_orders_id_cancel"},
		{"delete", "/a.b/{x}", "delete_a_b_x"},
	} {
		if got := Name(c.method, c.path); got != c.want {
			t.Errorf("Name(%s, %s) = %q, want %q", c.method, c.path, got, c.want)
		}
	}
}

func TestMethods(t *testing.T) {
	for m, want := range map[string][2]bool{
		"GET": {true, true}, "PUT": {true, false}, "DELETE": {true, true}, "POST": {false, false},
		"PATCH": {false, false}, "OPTIONS": {true, true}, "TRACE": {true, false},
	} {
		if Idempotent(m) != want[0] || Bodyless(m) != want[1] {
			t.Errorf("%s: idempotent %v bodyless %v, want %v", m, Idempotent(m), Bodyless(m), want)
		}
	}
}

func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream": true, "Text/Event-Stream; charset=utf-8": true, " text/event-stream ;x=1": true,
		"": false, "application/json": false, "text/event-streams": false, "text/plain; text/event-stream": false,
	} {
		if got := IsEventStream(ct); got != want {
			t.Errorf("IsEventStream(%q) = %v, want %v", ct, got, want)
		}
	}
}
