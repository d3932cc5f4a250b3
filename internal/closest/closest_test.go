package closest

import "testing"

func TestName(t *testing.T) {
	names := []string{"create_invoice", "get_invoice", "send_invoice", "charge", "delete_customer"}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"create_invoce", "create_invoice", true},  // a letter dropped
		{"Create_Invoice", "create_invoice", true}, // case
		{"get_invoices", "get_invoice", true},      // a letter added
		{"chrage", "charge", true},                 // two swapped: two edits, within a third of 6
		{"refund", "", false},                      // nothing near
		{"create_invoice", "", false},              // itself is no suggestion
		{"", "", false},                            // nothing is near nothing
		{"x", "", false},
	} {
		got, ok := Name(tc.in, names)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Name(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"charge", "chrage", 1}, {"kitten", "sitting", 3}, {"v1/order/x", "v1/orders/x", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func FuzzName(f *testing.F) {
	f.Add("create_invoce", "create_invoice")
	f.Fuzz(func(t *testing.T, name, other string) {
		got, ok := Name(name, []string{other, "charge"})
		if ok && got == name {
			t.Fatalf("suggested %q for itself", name)
		}
		if d := Distance(name, name); d != 0 {
			t.Fatalf("distance to itself %d", d)
		}
	})
}
