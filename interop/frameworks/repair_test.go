package frameworks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/interop"
	"github.com/remedy-go/remedy/interop/frameworks/ogenitems"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb"
	"github.com/remedy-go/remedy/interop/frameworks/rpcpb/rpcpbconnect"
	"github.com/remedy-go/remedy/rewrite"
)

// TestRepair runs remedy's client, set up as the README shows it (NewClient, WithBaseURL,
// WithRewriter(rewrite.Default), the default policies), against each framework's live server
// with wrong arguments: lossless ones (an enum in the wrong case, an integer as text, both, a
// nested one), lossy ones (a number over its maximum, a query limit over its maximum), an
// unrepairable one (a required member missing, with no default) and, where the framework has
// a standard rate limit, a call it refuses. Each case runs twice: with the operations' method
// and path only, and with their schema (Operation.Parameters). The client is judged by the
// server's own count (repaircount_test.go): the requests it received and the items it created.
//
// No lossless query case: a limit given as text ("5") travels in the query string as limit=5,
// exactly as the number would; no server can refuse it, so there is nothing to repair.
//
// The table it prints (and, when it passes, writes to $REMEDY_INTEROP_OUT/repair.md, which
// cmd/interoptable -repair checks the README against) is the measure of issue 37. Harm must
// be 0 and lossy or unrepairable calls must create nothing, always; the goals (goalsEnforced)
// are checked once the client reads the schema.
func TestRepair(t *testing.T) {
	var rows []repairRow
	t.Run("go", func(t *testing.T) {
		for _, fw := range []struct {
			name  string
			h     func(t *testing.T) http.Handler
			limit *rateLimitCheck
		}{
			{"gin", func(*testing.T) http.Handler { return ginApp() }, nil},
			// echo's rate limiter states no wait (a 429 without Retry-After): the loop's own
			// backoff meets it, which measures nothing of a stated wait.
			{"echo", func(*testing.T) http.Handler { return echoApp() }, nil},
			// fiber's limiter: 5 a minute, Retry-After 60.
			{"fiber", func(t *testing.T) http.Handler { return proxyTo(t, serveFiber(t, fiberApp())) }, &rateLimitCheck{}},
			{"kin-openapi (oapi-codegen middleware)", kinOpenAPIApp, nil},
			{"ogen", func(t *testing.T) http.Handler {
				srv, err := ogenitems.NewServer(ogenItems{})
				if err != nil {
					t.Fatal(err)
				}
				return srv
			}, nil},
		} {
			t.Run(fw.name, func(t *testing.T) {
				base, count := counted(t, fw.h(t))
				rows = append(rows, repairFramework(t, fw.name, base, count, itemsAPI(t), fw.limit))
			})
		}
	})
	t.Run("rpc", func(t *testing.T) {
		for _, fw := range []struct {
			name, path string
			serve      func(*testing.T) string
			limit      *rateLimitCheck
		}{
			{"connect", rpcpbconnect.OrdersCreateOrderProcedure, serveConnect, &rateLimitCheck{short: serveConnectShortLimit}},
			{"grpc-gateway", "/v1/orders", serveGateway, &rateLimitCheck{short: serveGatewayShortLimit}},
			{"twirp", rpcpb.OrdersPathPrefix + "CreateOrder", serveTwirp, nil},
		} {
			t.Run(fw.name, func(t *testing.T) {
				base, count := counted(t, proxyTo(t, fw.serve(t)))
				rows = append(rows, repairFramework(t, fw.name, base, count, rpcAPI(fw.path), fw.limit))
			})
		}
	})
	nodeRan := false
	t.Run("node", func(t *testing.T) {
		bases := nodeServers(t)
		nodeRan = true
		for _, fw := range []struct {
			name   string
			limits bool // /limited is behind the framework's standard rate limit, 2 a minute
		}{
			{"fastify", true},
			{"express-openapi-validator", false},
			{"express-validator", true},
			{"nestjs", false},
			{"hono-zod3", false},
			{"hono-zod4", false},
			{"celebrate", false},
			{"prism", false},
		} {
			t.Run(fw.name, func(t *testing.T) {
				target, ok := bases[fw.name]
				if !ok {
					t.Fatalf("servers.mjs started no %s", fw.name)
				}
				base, count := counted(t, proxyTo(t, target))
				var limit *rateLimitCheck
				if fw.limits {
					limit = &rateLimitCheck{}
				}
				rows = append(rows, repairFramework(t, fw.name, base, count, ordersAPI(t), limit))
			})
		}
	})
	table := repairTable(rows)
	t.Log("\n" + table)
	// Written only when every check passed, the Node frameworks included (not when Node is
	// missing here): the README's table says what CI measured and held.
	if dir := os.Getenv(interop.OutEnv); dir != "" && !t.Failed() && nodeRan {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, interop.RepairFile), []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goalsEnforced turns on the goals of issue 37: with the schema, every lossless case
// recovered in at most two requests (one when the check before sending repairs it) and every
// lossy one stopped with a proposal that names the bound; without it, every lossless case
// whose failure states the field and the fix recovered. It is false until the client reads
// the schema (rewrite.Default on rewrite.Request.Schema, the loop's check against Call.Schema,
// Client.Call passing Operation.Parameters): the lead turns it on when those land, so that CI
// passes in between. What never waits for it: no harm, and nothing created by a lossy or
// unrepairable call.
const goalsEnforced = true

// caseKind is what a case's arguments need.
type caseKind int

const (
	lossless     caseKind = iota // a repair that keeps what the call means
	lossy                        // only a repair that changes it (a clamp): a person decides
	unrepairable                 // no repair: a required member with no default is missing
)

// repairCase is one call with wrong arguments, and what the caller meant.
type repairCase struct {
	name string
	kind caseKind
	list bool   // the list operation (GET); otherwise the create
	args string // the caller's arguments, JSON ("CUSTOMER" is replaced: see repairAPI)
	want string // lossless: the arguments the caller meant, the lossless repair of args
	// lossy: the JSON Pointer of the value over its bound, and the bound, as JSON.
	bound, max string
}

// repairAPI is one API the frameworks serve: its operations without and with their schema,
// and its cases.
type repairAPI struct {
	create, list client.Operation   // method and path only; list.Name is "" when there is none
	schema       []client.Operation // the same operations, with Parameters
	cases        []repairCase
	// perCustomer: the API lets a customer place one order per period (rpc_test.go's
	// customerLimit), so every call gets a customer of its own, "CUSTOMER" in args and want.
	perCustomer bool
}

// itemsAPI is the Go apps' API (goapps_test.go): its schema is itemsSpec, the OpenAPI
// document kin-openapi validates with.
func itemsAPI(t *testing.T) repairAPI {
	return repairAPI{
		create: client.Operation{Name: "createItem", Method: http.MethodPost, Path: "/items"},
		list:   client.Operation{Name: "listItems", Method: http.MethodGet, Path: "/items"},
		schema: fromOpenAPI(t, []byte(itemsSpec)),
		cases: []repairCase{
			{name: "enum case", kind: lossless, args: `{"sku":"A1","currency":"USD","quantity":1}`, want: `{"sku":"A1","currency":"usd","quantity":1}`},
			{name: "integer as text", kind: lossless, args: `{"sku":"A1","currency":"usd","quantity":"5"}`, want: `{"sku":"A1","currency":"usd","quantity":5}`},
			{name: "both", kind: lossless, args: `{"sku":"A1","currency":"EUR","quantity":"5"}`, want: `{"sku":"A1","currency":"eur","quantity":5}`},
			{name: "nested", kind: lossless,
				args: `{"sku":"A1","currency":"usd","quantity":1,"lines":[{"sku":"B1","quantity":"2"}]}`,
				want: `{"sku":"A1","currency":"usd","quantity":1,"lines":[{"sku":"B1","quantity":2}]}`},
			{name: "over the maximum", kind: lossy, args: `{"sku":"A1","currency":"usd","quantity":500}`, bound: "/quantity", max: "100"},
			{name: "query over the maximum", kind: lossy, list: true, args: `{"limit":500}`, bound: "/limit", max: "100"},
			{name: "required missing", kind: unrepairable, args: `{"currency":"usd","quantity":1}`},
		},
	}
}

// ordersAPI is the Node frameworks' and Prism's API (node/servers.mjs): its schema is
// node/orders.openapi.json.
func ordersAPI(t *testing.T) repairAPI {
	doc, err := os.ReadFile(filepath.Join(nodeDir, "orders.openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	return repairAPI{
		create: client.Operation{Name: "createOrder", Method: http.MethodPost, Path: "/orders"},
		list:   client.Operation{Name: "listOrders", Method: http.MethodGet, Path: "/orders"},
		schema: fromOpenAPI(t, doc),
		cases: []repairCase{
			{name: "enum case", kind: lossless, args: `{"color":"RED","quantity":1}`, want: `{"color":"red","quantity":1}`},
			{name: "integer as text", kind: lossless, args: `{"color":"red","quantity":"5"}`, want: `{"color":"red","quantity":5}`},
			{name: "both", kind: lossless, args: `{"color":"GREEN","quantity":"5"}`, want: `{"color":"green","quantity":5}`},
			{name: "nested", kind: lossless,
				args: `{"color":"red","quantity":1,"lines":[{"sku":"a","quantity":"2"}]}`,
				want: `{"color":"red","quantity":1,"lines":[{"sku":"a","quantity":2}]}`},
			{name: "over the maximum", kind: lossy, args: `{"color":"red","quantity":500}`, bound: "/quantity", max: "100"},
			{name: "query over the maximum", kind: lossy, list: true, args: `{"limit":500}`, bound: "/limit", max: "50"},
			{name: "required missing", kind: unrepairable, args: `{"quantity":1}`},
		},
	}
}

// rpcOrderSchema is the JSON request of orders.proto's CreateOrder as its caller gives it:
// RPC frameworks publish no JSON Schema, so the caller writes Operation.Parameters from the
// proto (protojson's names; the enum by its value names, as protojson writes them) and from
// the service's documented rules (customer and currency required, quantity at most 100:
// orderViolations).
const rpcOrderSchema = `{
  "type": "object",
  "required": ["customer", "currency"],
  "properties": {
    "customer": {"type": "string", "minLength": 1},
    "currency": {"type": "string", "enum": ["USD", "EUR", "GBP"]},
    "quantity": {"type": "integer", "minimum": -2147483648, "maximum": 100},
    "lines": {"type": "array", "items": {
      "type": "object",
      "required": ["sku"],
      "properties": {
        "sku": {"type": "string", "minLength": 1},
        "quantity": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}
      }
    }}
  }
}`

// rpcAPI is the RPC frameworks' CreateOrder (rpc_test.go) at path, in JSON. It has no list.
func rpcAPI(path string) repairAPI {
	create := client.Operation{Name: "createOrder", Method: http.MethodPost, Path: path}
	withSchema := create
	withSchema.Parameters = json.RawMessage(rpcOrderSchema) // given by the caller
	return repairAPI{
		create:      create,
		schema:      []client.Operation{withSchema},
		perCustomer: true,
		cases: []repairCase{
			{name: "enum case", kind: lossless, args: `{"customer":"CUSTOMER","currency":"usd","quantity":1}`, want: `{"customer":"CUSTOMER","currency":"USD","quantity":1}`},
			{name: "integer as text", kind: lossless, args: `{"customer":"CUSTOMER","currency":"USD","quantity":"5"}`, want: `{"customer":"CUSTOMER","currency":"USD","quantity":5}`},
			{name: "both", kind: lossless, args: `{"customer":"CUSTOMER","currency":"eur","quantity":"5"}`, want: `{"customer":"CUSTOMER","currency":"EUR","quantity":5}`},
			{name: "nested", kind: lossless,
				args: `{"customer":"CUSTOMER","currency":"USD","quantity":1,"lines":[{"sku":"a-1","quantity":"2"}]}`,
				want: `{"customer":"CUSTOMER","currency":"USD","quantity":1,"lines":[{"sku":"a-1","quantity":2}]}`},
			{name: "over the maximum", kind: lossy, args: `{"customer":"CUSTOMER","currency":"USD","quantity":500}`, bound: "/quantity", max: "100"},
			{name: "required missing", kind: unrepairable, args: `{"currency":"USD","quantity":1}`},
		},
	}
}

func fromOpenAPI(t *testing.T, doc []byte) []client.Operation {
	t.Helper()
	ops, err := client.OperationsFromOpenAPI(doc)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// The three ways the client is set up: without the operations' schema; with it, the check
// before sending off (client.CheckOff), so that what the client does with the server's answer
// is measured; and with it as the README sets it up, the check before sending on.
const (
	withoutSchema = "without schema"
	schemaAfter   = "schema, after the answer"
	withSchema    = "with schema"
)

// modes are the setups, in the table's order.
var modes = []string{withoutSchema, schemaAfter, withSchema}

// result is what one case did, judged by the server's count.
type result struct {
	c        repairCase
	mode     string
	err      error
	attempts []client.Attempt
	reqs     []seen // the requests the server received during the call
	created  int    // 2xx answers to a create
	// recovered: the item the caller meant was created exactly once (lossless cases).
	recovered bool
	// acceptedAsSent: the server took the caller's arguments as they were (its first answer
	// was a success): nothing to repair.
	acceptedAsSent bool
	// states: every failure the server sent states, for every issue, the field and a fix (a
	// suggested value, the allowed values, the expected type or bound).
	states bool
	// namesBound: the call stopped with a proposal that clamps the value to its bound.
	namesBound bool
	harm       []string
}

// rateLimitCheck is a rate-limit case: short serves the framework's orders service with a
// refusal whose wait (RetryInfo) the loop honours (shortLimit); without it, GET /limited
// behind the framework's standard middleware, whose one-minute window the loop must not wait
// out.
type rateLimitCheck struct{ short func(*testing.T) string }

// repairRow is one framework's line of the table.
type repairRow struct {
	framework string
	results   []result
	rateLimit string // what the rate-limit case did; "" when the framework has none here
}

// repairFramework runs every case of api against the framework at base, in every mode.
func repairFramework(t *testing.T, name, base string, count *counter, api repairAPI, limit *rateLimitCheck) repairRow {
	t.Helper()
	row := repairRow{framework: name}
	without := []client.Operation{api.create}
	if api.list.Name != "" {
		without = append(without, api.list)
	}
	for _, mode := range modes {
		ops := without
		if mode != withoutSchema {
			ops = api.schema
		}
		for _, c := range api.cases {
			if api.perCustomer {
				customer := strings.NewReplacer(" ", "-").Replace(mode + "-" + c.name)
				c.args = strings.ReplaceAll(c.args, "CUSTOMER", customer)
				c.want = strings.ReplaceAll(c.want, "CUSTOMER", customer)
			}
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				r := runCase(t, base, count, api, ops, c, mode)
				row.results = append(row.results, r)
				checkCase(t, r)
			})
		}
	}
	if limit != nil {
		t.Run("rate limit", func(t *testing.T) {
			if limit.short != nil {
				row.rateLimit = shortRateLimit(t, limit.short, api.create.Path)
			} else {
				row.rateLimit = windowRateLimit(t, base, count)
			}
		})
	}
	if goalsEnforced {
		checkGoals(t, row)
	}
	return row
}

// newClient is the client as the README's loop section sets it up.
// (more options only for the suite's own check: TestRepairSeesHarm).
func newClient(t *testing.T, base string, ops []client.Operation, more ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(append([]client.Option{
		client.WithBaseURL(base),
		client.WithOperations(ops...),
	}, more...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runCase(t *testing.T, base string, count *counter, api repairAPI, ops []client.Operation, c repairCase, mode string, more ...client.Option) result {
	t.Helper()
	op := api.create
	if c.list {
		op = api.list
	}
	if mode == schemaAfter {
		more = append(more, client.WithSchemaCheck(client.CheckOff))
	}
	cl := newClient(t, base, ops, more...)
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	mark := count.mark()
	resp, err := cl.Call(ctx, op.Name, json.RawMessage(c.args))
	r := result{c: c, mode: mode, err: err, reqs: count.since(mark)}
	var ce *client.CallError
	switch {
	case err == nil:
		r.attempts = resp.Attempts
	case errors.As(err, &ce):
		r.attempts = ce.Attempts
	}
	judge(&r, op)
	if ce != nil && errors.Is(err, client.ErrRewriteRefused) && ce.Proposal != nil && c.kind == lossy {
		for _, ch := range ce.Proposal.Changes {
			if ch.Path == c.bound && ch.Lossy && string(ch.New) == c.max {
				r.namesBound = true
			}
		}
	}
	for _, a := range r.attempts {
		if a.Envelope != nil && a.Status != 0 {
			r.states = statesFix(a.Envelope)
			if !r.states {
				break
			}
		}
	}
	return r
}

// judge counts what the server created and finds harm in what it received: a value that is
// neither the caller's nor the lossless repair of it (a request that creates an item with
// such a value included), an item created twice, or created by a call that should create
// nothing.
func judge(r *result, op client.Operation) {
	for i, s := range r.reqs {
		if s.method != op.Method || s.path != op.Path {
			r.harm = append(r.harm, fmt.Sprintf("request %d went to %s %s", i+1, s.method, s.path))
			continue
		}
		sent, err := sentValues(s)
		if err != nil {
			r.harm = append(r.harm, fmt.Sprintf("request %d: %v", i+1, err))
			continue
		}
		if why := notTheCallers(sent, r.c, op.Method == http.MethodGet); why != "" {
			r.harm = append(r.harm, fmt.Sprintf("request %d %s", i+1, why))
		}
		if r.c.list || s.status < 200 || s.status > 299 {
			continue
		}
		r.created++
		if i == 0 {
			r.acceptedAsSent = true
		}
		// The values of an item created are checked as every request's are, value by value: a
		// server that coerces (Joi, ajv with coerceTypes, protojson) may take a request in
		// which some of the caller's values are repaired and others not.
		if r.c.kind != lossless {
			r.harm = append(r.harm, fmt.Sprintf("request %d created an item the call did not ask for: %s", i+1, s.body))
		}
	}
	if r.created > 1 {
		r.harm = append(r.harm, fmt.Sprintf("%d items created for one call", r.created))
	}
	r.recovered = r.c.kind == lossless && r.err == nil && r.created == 1 && len(r.harm) == 0
}

// sentValues is what a request carried, as leaves by JSON Pointer: the body's, or the query's
// (a query value is text).
func sentValues(s seen) (map[string]string, error) {
	if s.method == http.MethodGet {
		q, err := url.ParseQuery(s.query)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for k, vs := range q {
			if len(vs) != 1 {
				return nil, fmt.Errorf("query %s sent %d times", k, len(vs))
			}
			out["/"+k] = vs[0]
		}
		return out, nil
	}
	return leaves([]byte(s.body))
}

// notTheCallers says which value of sent is neither the caller's nor its lossless repair, and
// which of the caller's members is missing; "" when none.
func notTheCallers(sent map[string]string, c repairCase, query bool) string {
	args, _ := leaves([]byte(c.args))
	want := map[string]string{}
	if c.want != "" {
		want, _ = leaves([]byte(c.want))
	}
	if query {
		args, want = asQuery(args), asQuery(want)
	}
	for p, v := range sent {
		a, inArgs := args[p]
		w, inWant := want[p]
		if !(inArgs && a == v) && !(inWant && w == v) {
			return fmt.Sprintf("sent %s = %s, neither the caller's value nor its lossless repair", p, v)
		}
	}
	for p := range args {
		if _, ok := sent[p]; !ok {
			return fmt.Sprintf("dropped the caller's %s", p)
		}
	}
	return ""
}

// asQuery is leaves as a query string carries them: text without JSON's quotes.
func asQuery(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal([]byte(v), &s) == nil {
			v = s
		}
		out[k] = v
	}
	return out
}

// leaves flattens a JSON document into its scalar leaves by JSON Pointer, each as compact
// JSON (numbers as written: 5 and "5" differ).
func leaves(doc []byte) (map[string]string, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(string(doc)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %q", doc)
	}
	out := map[string]string{}
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(p+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s/%d", p, i), x)
			}
		default:
			b, _ := json.Marshal(v)
			out[p] = string(b)
		}
	}
	walk("", v)
	return out, nil
}

// statesFix reports whether every issue of e names its field and a fix.
func statesFix(e *remedy.Envelope) bool {
	if len(e.Issues) == 0 {
		return false
	}
	for _, is := range e.Issues {
		if is.Path == "" || (is.SuggestedValue == nil && len(is.AllowedValues) == 0 && is.Expected == nil) {
			return false
		}
	}
	return true
}

// checkCase asserts what must hold today: no harm; a lossy or unrepairable call stops and
// creates nothing; a lossy one stops with a proposal that names the bound, or gives up.
func checkCase(t *testing.T, r result) {
	t.Helper()
	for _, h := range r.harm {
		t.Errorf("harm: %s", h)
	}
	switch r.c.kind {
	case lossy:
		// A proposal that names the bound, or (the bound not stated, no schema) giving up.
		switch {
		case errors.Is(r.err, client.ErrRewriteRefused):
			if !r.namesBound {
				t.Errorf("stopped with a proposal that does not clamp %s to %s: %v", r.c.bound, r.c.max, r.err)
			}
		case !errors.Is(r.err, client.ErrRewriteGaveUp):
			t.Errorf("a lossy call: %v (%d requests), want ErrRewriteRefused or ErrRewriteGaveUp", r.err, len(r.reqs))
		}
	case unrepairable:
		if r.err == nil {
			t.Errorf("an unrepairable call succeeded: %d requests", len(r.reqs))
		}
	}
	if r.c.kind != lossless && r.created > 0 {
		t.Errorf("a %s call created %d items", kindName(r.c.kind), r.created)
	}
	var ce *client.CallError
	if errors.As(r.err, &ce) && len(ce.Blocked) > 0 {
		t.Logf("blocked: %+v", ce.Blocked)
	}
	t.Logf("%d requests, %d created, recovered %v, error: %v", len(r.reqs), r.created, r.recovered, r.err)
}

// checkGoals asserts issue 37's goals (goalsEnforced).
func checkGoals(t *testing.T, row repairRow) {
	t.Helper()
	for _, r := range row.results {
		switch {
		case r.c.kind == lossless && r.mode == withSchema && (!r.recovered || len(r.reqs) > 2):
			t.Errorf("goal: %s, %s: recovered %v in %d requests, want recovered in 2 at most (%v)", r.mode, r.c.name, r.recovered, len(r.reqs), r.err)
		case r.c.kind == lossless && r.mode == schemaAfter && !r.acceptedAsSent && !r.recovered:
			t.Errorf("goal: %s, %s: the schema states the fix, not recovered (%v)", r.mode, r.c.name, r.err)
		case r.c.kind == lossless && r.mode == withoutSchema && r.states && !r.recovered:
			t.Errorf("goal: %s, %s: the failure states the field and the fix, not recovered (%v)", r.mode, r.c.name, r.err)
		case r.c.kind == lossy && r.mode != withoutSchema && !r.namesBound:
			t.Errorf("goal: %s, %s: want a proposal clamping %s to %s, got %v", r.mode, r.c.name, r.c.bound, r.c.max, r.err)
		}
	}
}

func kindName(k caseKind) string {
	return [...]string{"lossless", "lossy", "unrepairable"}[k]
}

// TestRepairSeesHarm checks the judge on a client that does harm: one whose policy approves
// every lossy repair clamps the quantity to its bound, and the item is created with a value
// the caller never gave. The judge must count both.
func TestRepairSeesHarm(t *testing.T) {
	base, count := counted(t, kinOpenAPIApp(t))
	api := itemsAPI(t)
	var lossyCase repairCase
	for _, c := range api.cases {
		if c.kind == lossy && !c.list {
			lossyCase = c
		}
	}
	r := runCase(t, base, count, api, api.schema, lossyCase, withSchema, client.WithRewritePolicy(rewrite.All))
	if r.err != nil || r.created != 1 {
		t.Fatalf("the approved clamp: created %d, %v", r.created, r.err)
	}
	if len(r.harm) != 2 {
		t.Errorf("harm %q, want the clamped value sent and the item created unasked", r.harm)
	}
}
