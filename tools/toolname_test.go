package tools_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/tools"
)

// The tool-name rules the vendors document, as their documentation states them.
var (
	openAIName    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)            // OpenAI function names
	anthropicName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)            // Anthropic tool names
	geminiName    = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`) // Gemini: a letter or '_' first, at most 64
	firebaseName  = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,63}$`)            // Firebase AI Logic's Gemini: at most 63
)

// portableEverywhere reports which documented rule name breaks, if any.
func portableEverywhere(name string) string {
	for rule, re := range map[string]*regexp.Regexp{"OpenAI": openAIName, "Anthropic": anthropicName, "Gemini": geminiName, "Firebase": firebaseName} {
		if !re.MatchString(name) {
			return rule
		}
	}
	return ""
}

func TestPortableToolName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("very_long_operation_name_", 5) // 125 characters
	for _, c := range []struct{ in, want string }{
		{"create_invoice", "create_invoice"}, // portable already: unchanged
		{"get-order", "get-order"},
		{"_private", "_private"},
		{"BillingController.createInvoice", "BillingController_createInvoice"}, // AgentBack's Class.method
		{"/v1/orders/{id}", "v1_orders_id"},
		{"create invoice", "create_invoice"},
		{"billing:invoices.create", "billing_invoices_create"},
		{"a..b//c  d", "a_b_c_d"},
		{"a_.b", "a_b"}, // a run of separators, an underscore among them, is one '_'
		{"créer_facture", "cr_er_facture"},
		{"2fa.enable", "_2fa_enable"}, // Gemini wants a letter or '_' first
		{"-x.y", "_-x_y"},
	} {
		got := tools.PortableName(c.in)
		if got != c.want {
			t.Errorf("PortableToolName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Cut, with a hash of the whole name: two long names that share their start stay apart.
	a, b := tools.PortableName(long+"create"), tools.PortableName(long+"delete")
	if len(a) != tools.MaxNameLen || a == b || !strings.HasPrefix(a, "very_long_operation_name_very_long") {
		t.Errorf("long names: %q, %q", a, b)
	}
	// Nothing portable left: a name of its hash.
	if n := tools.PortableName("名前"); !strings.HasPrefix(n, "tool_") || n == tools.PortableName("名前2") {
		t.Errorf("a name with nothing portable: %q", n)
	}
	if n := tools.PortableName(""); portableEverywhere(n) != "" {
		t.Errorf("the empty name: %q", n)
	}
}

// FuzzPortableToolName: whatever the name, the portable name follows every vendor's rule, is
// the same each time, and is the name itself when that follows them already.
func FuzzPortableToolName(f *testing.F) {
	for _, s := range []string{"create_invoice", "BillingController.createInvoice", "/v1/x/{id}", "名前", "2fa", strings.Repeat("x.", 60), "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := tools.PortableName(name)
		if rule := portableEverywhere(got); rule != "" {
			t.Fatalf("PortableToolName(%q) = %q breaks %s's rule", name, got, rule)
		}
		if again := tools.PortableName(name); again != got {
			t.Fatalf("not deterministic: %q, then %q", got, again)
		}
		if portableEverywhere(name) == "" && got != name {
			t.Fatalf("a portable name changed: %q → %q", name, got)
		}
	})
}

// A toolset keeps apart the operations whose names map to one tool name, whatever their
// order; the name that was portable already keeps itself; every definition follows each
// vendor's rule; and a call by the tool name or by the operation's name runs the operation by
// its own name.
func TestToolsetPortableNames(t *testing.T) {
	t.Parallel()
	names := []string{"a_b", "a.b", "a/b", "a b", "BillingController.createInvoice", "名前", "名前2",
		strings.Repeat("x", 70) + ".1", strings.Repeat("x", 70) + ".2"}
	var ran []string
	call := func(_ context.Context, name string, _ json.RawMessage) (*client.Response, error) {
		ran = append(ran, name)
		return &client.Response{Status: 200, Body: []byte(`{"ok":true}`)}, nil
	}
	toolset := func(order []string) *tools.Toolset {
		ops := make([]client.Operation, len(order))
		for i, n := range order {
			ops[i] = client.Operation{Name: n, Method: "POST", Path: "/x"}
		}
		return tools.New(ops, call, tools.Options{})
	}
	ts := toolset(names)
	byOp := map[string]string{}
	seen := map[string]bool{}
	for _, d := range ts.Definitions() {
		if rule := portableEverywhere(d.Name); rule != "" {
			t.Errorf("%q (for %q) breaks %s's rule", d.Name, d.Operation, rule)
		}
		if seen[d.Name] {
			t.Errorf("two tools named %q", d.Name)
		}
		seen[d.Name], byOp[d.Operation] = true, d.Name
	}
	if len(byOp) != len(names) {
		t.Fatalf("%d tools for %d operations: %v", len(byOp), len(names), byOp)
	}
	if byOp["a_b"] != "a_b" || byOp["BillingController.createInvoice"] != "BillingController_createInvoice" {
		t.Errorf("names kept: %v", byOp)
	}
	for _, n := range []string{"a.b", "a/b", "a b"} {
		if !strings.HasPrefix(byOp[n], "a_b_") || len(byOp[n]) != len("a_b_")+8 {
			t.Errorf("%q, in a collision, is %q: want a_b and a hash", n, byOp[n])
		}
	}
	// The same names in another order get the same tool names.
	shuffled := append([]string(nil), names...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, d := range toolset(shuffled).Definitions() {
		if byOp[d.Operation] != d.Name {
			t.Errorf("in another order %q is %q, was %q", d.Operation, d.Name, byOp[d.Operation])
		}
	}
	// Dispatch: by the tool name and by the operation's name, the operation runs by its name.
	for _, op := range names {
		for _, asked := range []string{byOp[op], op} {
			ran = nil
			out, err := ts.Dispatch(context.Background(), asked, `{}`)
			if err != nil || out != `{"ok":true}` || len(ran) != 1 || ran[0] != op {
				t.Errorf("Dispatch(%q): %q %v, ran %v, want %q", asked, out, err, ran, op)
			}
		}
	}
	// The vendors' shapes carry the portable names.
	for vendor, write := range map[string]func() (json.RawMessage, error){
		"OpenAI": ts.Definitions().OpenAI, "Anthropic": ts.Definitions().Anthropic, "Gemini": ts.Definitions().Gemini,
	} {
		doc, err := write()
		if err != nil {
			t.Fatalf("%s: %v", vendor, err)
		}
		if strings.Contains(string(doc), "BillingController.createInvoice") || !strings.Contains(string(doc), `"BillingController_createInvoice"`) {
			t.Errorf("%s's definitions: %s", vendor, doc)
		}
	}
}

// Definitions written by hand are checked against each vendor's rule, with the way out named.
func TestToolDefinitionsRefuseBadNames(t *testing.T) {
	t.Parallel()
	bad := tools.Definitions{{Name: "BillingController.createInvoice"}}
	for vendor, write := range map[string]func() (json.RawMessage, error){"OpenAI": bad.OpenAI, "Anthropic": bad.Anthropic} {
		if _, err := write(); err == nil || !strings.Contains(err.Error(), "PortableToolName") {
			t.Errorf("%s: %v", vendor, err)
		}
	}
	// Gemini takes dots, and refuses a digit first.
	if _, err := bad.Gemini(); err != nil {
		t.Errorf("Gemini refused a dotted name: %v", err)
	}
	if _, err := (tools.Definitions{{Name: "2fa"}}).Gemini(); err == nil {
		t.Error("Gemini took a name starting with a digit")
	}
}
