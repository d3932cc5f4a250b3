package remedy_test

import (
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
)

// TestNewClientRefusesDuplicateOperations: two operations of one name, in one WithOperations
// or across several, are an error naming the operation, not a silent replacement whose
// outcome depends on the order of the options.
func TestNewClientRefusesDuplicateOperations(t *testing.T) {
	t.Parallel()
	a := remedy.Operation{Name: "create_order", Method: "POST", Path: "/v1/orders"}
	b := remedy.Operation{Name: "create_order", Method: "PUT", Path: "/v1/orders/{id}"}
	for name, opts := range map[string][]remedy.Option{
		"one option":     {remedy.WithOperations(a, b)},
		"two options":    {remedy.WithOperations(a), remedy.WithOperations(b)},
		"the same twice": {remedy.WithOperations(a, a)},
	} {
		opts = append(opts, remedy.WithBaseURL("http://127.0.0.1:1"))
		if _, err := remedy.NewClient(opts...); err == nil || !strings.Contains(err.Error(), `"create_order" is given twice`) {
			t.Errorf("%s: %v", name, err)
		}
	}
	c, err := remedy.NewClient(remedy.WithBaseURL("http://127.0.0.1:1"), remedy.WithOperations(a))
	if err != nil {
		t.Fatal(err)
	}
	// Register, later, replaces by name: documented, and what LoadOpenAPI relies on.
	if err := c.Register(b); err != nil {
		t.Errorf("Register replacing an operation: %v", err)
	}
}
