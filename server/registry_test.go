package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/server"
)

// registryBuiltins is what the built-in codes promise: status, category, retryable, and what the
// reference client does with each as the server sends it (decorate adds what the pipeline adds
// to that failure: issues, a token, a next operation, a wait).
var registryBuiltins = []struct {
	code      string
	status    int
	category  remedy.Category
	retryable bool
	decorate  func(*remedy.Envelope)
	action    client.Action
	cause     error // for ActStop
}{
	// Not retryable (sent unchanged, they fail the same way), and repaired from their issues.
	{"invalid_parameter", 400, remedy.CategoryValidation, false, regWithIssue("/limit"), client.ActRewrite, nil},
	{"invalid_json", 400, remedy.CategoryValidation, false, regWithIssue(""), client.ActRewrite, nil},
	{"invalid_body", 422, remedy.CategoryValidation, false, regWithIssue("/currency"), client.ActRewrite, nil},
	{"invalid_input", 422, remedy.CategoryValidation, false, regWithIssue("/end_date"), client.ActRewrite, nil},
	{"invalid_request", 400, remedy.CategoryValidation, false, nil, client.ActStop, client.ErrNotRetryable},
	{"unsupported_media_type", 415, remedy.CategoryValidation, false, nil, client.ActStop, client.ErrNotRetryable},
	{"payload_too_large", 413, remedy.CategoryValidation, false, nil, client.ActStop, client.ErrNotRetryable},
	{"unauthorized", 401, remedy.CategoryAuth, false, nil, client.ActStop, client.ErrNotRetryable},
	{"forbidden", 403, remedy.CategoryAuth, false, nil, client.ActStop, client.ErrNotRetryable},
	// An issue naming the identifier does not make the client guess another one.
	{"not_found", 404, remedy.CategoryValidation, false, regWithIssue("/order_id"), client.ActStop, client.ErrNotRetryable},
	{"method_not_allowed", 405, remedy.CategoryValidation, false, nil, client.ActStop, client.ErrNotRetryable},
	{"conflict", 409, remedy.CategoryState, false, nil, client.ActStop, client.ErrNotRetryable},
	{"precondition_failed", 409, remedy.CategoryState, true, regWithNextOperation, client.ActNextOperation, nil},
	// Not retryable (without the token it is challenged again), and confirmed by its token.
	{"confirmation_required", 409, remedy.CategoryState, false, regWithToken, client.ActConfirm, nil},
	{"confirmation_invalid", 409, remedy.CategoryState, false, nil, client.ActStop, client.ErrConfirmationRejected},
	{"payment_required", 402, remedy.CategoryAuth, false, nil, client.ActStop, client.ErrNotRetryable},
	{"idempotency_key_required", 400, remedy.CategoryValidation, false, nil, client.ActStop, client.ErrNotRetryable},
	{"idempotency_key_invalid", 400, remedy.CategoryValidation, false, nil, client.ActStop, client.ErrNotRetryable},
	{"idempotency_key_reused", 422, remedy.CategoryState, false, nil, client.ActStop, client.ErrIdempotencyKeyReused},
	{"idempotency_in_flight", 409, remedy.CategoryState, true, regWithWait(time.Second), client.ActRetry, nil},
	{"rate_limited", 429, remedy.CategoryRateLimit, true, regWithWait(2 * time.Second), client.ActRetry, nil},
	{"internal_error", 500, remedy.CategoryInternal, false, regWithTrace, client.ActStop, client.ErrNotRetryable},
	{"unavailable", 503, remedy.CategoryDependency, true, nil, client.ActRetry, nil},
	{"confirmation_declined", 409, remedy.CategoryState, false, nil, client.ActStop, client.ErrNotRetryable},
	{"person_required", 403, remedy.CategoryAuth, false, nil, client.ActStop, client.ErrNotRetryable},
}

func regWithIssue(ptr string) func(*remedy.Envelope) {
	return func(e *remedy.Envelope) {
		e.Issues = []remedy.Issue{{Path: ptr, Code: "invalid", Message: "not accepted", Expected: json.RawMessage(`"string"`)}}
	}
}

func regWithWait(d time.Duration) func(*remedy.Envelope) {
	return func(e *remedy.Envelope) { e.RetryAfter = d }
}

func regWithNextOperation(e *remedy.Envelope) {
	e.NextOperation = "finalize_invoice"
	e.NextOperationArgs = json.RawMessage(`{"id":"in_1"}`)
	e.CurrentStatus, e.RequiredStatus = "draft", "open"
}

func regWithToken(e *remedy.Envelope) { e.ConfirmationToken = "ct_123" }

func regWithTrace(e *remedy.Envelope) { e.TraceID = "4bf92f3577b34da6a3ce929d0e0e4736" }

func TestBuiltinCodes(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	codes := reg.Codes()
	require.Len(t, codes, len(registryBuiltins), "every built-in code is in the table, and only those")
	for i := 1; i < len(codes); i++ {
		assert.Less(t, codes[i-1].Code, codes[i].Code, "Codes is sorted")
	}
	for _, tc := range registryBuiltins {
		c, ok := reg.Lookup(tc.code)
		require.True(t, ok, tc.code)
		assert.Equal(t, tc.code, c.Code)
		assert.Equal(t, tc.status, c.Status, tc.code)
		assert.Equal(t, tc.category, c.Category, tc.code)
		assert.Equal(t, tc.retryable, c.Retryable, tc.code)
		assert.Equal(t, remedy.SeverityError, c.Severity, tc.code)
		assert.Equal(t, server.Stable, c.Stability, tc.code)
		for _, field := range []string{c.Title, c.Hint, c.Cause, c.Repair} {
			assert.NotEmpty(t, strings.TrimSpace(field), tc.code)
		}
		assert.Empty(t, c.DocsURL, "%s: no docs base, no URL", tc.code)
		for _, rel := range c.Related {
			_, ok := reg.Lookup(rel)
			assert.True(t, ok, "%s relates to %s", tc.code, rel)
		}
	}
}

// The envelope of every built-in, in both encodings, reads back through the client's parser
// as what the registry says.
func TestBuiltinEnvelopeContract(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	reg.SetDocsBase("https://docs.example.com/errors")
	for _, c := range reg.Codes() {
		env := c.Envelope("Something specific went wrong.")
		for _, enc := range []struct {
			name    string
			marshal func() ([]byte, error)
			dialect remedy.Dialect
		}{
			{"canonical", env.MarshalJSON, remedy.DialectAgent},
			{"problem", env.MarshalProblem, remedy.DialectProblem},
		} {
			t.Run(c.Code+"/"+enc.name, func(t *testing.T) {
				body, err := enc.marshal()
				require.NoError(t, err)
				got, ok := remedy.Parse(c.Status, nil, body)
				require.True(t, ok, "%s", body)
				assert.Equal(t, enc.dialect, got.Dialect)
				assert.Equal(t, c.Code, got.Code)
				assert.Equal(t, c.Status, got.Status)
				assert.Equal(t, c.Retryable, got.Retryable)
				assert.Equal(t, remedy.RetryFromBody, got.RetrySource)
				assert.Equal(t, c.Severity, got.Severity)
				assert.Equal(t, c.Category, got.Category)
				assert.Equal(t, c.Title, got.Title)
				assert.Equal(t, "Something specific went wrong.", got.Message)
				assert.Equal(t, c.Hint, got.Hint)
				assert.Equal(t, c.Related, got.RelatedCodes)
				assert.Equal(t, "https://docs.example.com/errors#"+c.Code, got.DocsURL)
			})
		}
	}
}

// What the reference client decides for each built-in, read back from the wire as the server
// sends it.
func TestBuiltinDecide(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	for _, tc := range registryBuiltins {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			c, ok := reg.Lookup(tc.code)
			require.True(t, ok)
			env := c.Envelope("")
			if tc.decorate != nil {
				tc.decorate(env)
			}
			body, err := env.MarshalJSON()
			require.NoError(t, err)
			parsed, ok := remedy.Parse(c.Status, nil, body)
			require.True(t, ok)

			s := client.State{Attempt: 1, SafeToRepeat: true, BudgetLeft: true, CanRewrite: true}
			d := client.Decide(parsed, nil, &s)
			assert.Equal(t, tc.action, d.Action, "%s: %s", d.Why, body)
			if tc.action == client.ActStop {
				assert.ErrorIs(t, d.Cause, tc.cause, d.Why)
			}
			if env.RetryAfter > 0 {
				assert.Equal(t, env.RetryAfter, d.Wait, "the server's wait is honoured")
			}
		})
	}
}

// The client's fallbacks for the built-ins sent without what the pipeline normally adds.
func TestBuiltinDecideUndecorated(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	for _, tc := range []struct {
		code   string
		action client.Action
		cause  error
	}{
		// A challenge whose token is missing is handed to the caller, never retried.
		{"confirmation_required", client.ActStop, client.ErrConfirmationRequired},
		// A state that advances by itself: retried unchanged after a backoff.
		{"precondition_failed", client.ActRetry, nil},
		// A validation failure that names nothing to fix is not sent again as it is.
		{"invalid_body", client.ActStop, client.ErrNotRetryable},
	} {
		c, _ := reg.Lookup(tc.code)
		body, _ := c.Envelope("").MarshalJSON()
		parsed, _ := remedy.Parse(c.Status, nil, body)
		s := client.State{Attempt: 1, SafeToRepeat: true, BudgetLeft: true, CanRewrite: true}
		d := client.Decide(parsed, nil, &s)
		assert.Equal(t, tc.action, d.Action, tc.code)
		if tc.cause != nil {
			assert.ErrorIs(t, d.Cause, tc.cause, tc.code)
		}
	}
}

func regCode(code string) server.Code {
	return server.Code{Code: code, Status: 409, Title: "Order shipped", Category: remedy.CategoryState}
}

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	mod := func(code string, f func(*server.Code)) server.Code {
		c := regCode(code)
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		code server.Code
		want string // in the error, besides the code's name
	}{
		{"upper case", regCode("Order_Shipped"), "snake_case"},
		{"hyphen", regCode("order-shipped"), "snake_case"},
		{"leading digit", regCode("9lives"), "snake_case"},
		{"leading underscore", regCode("_x"), "snake_case"},
		{"space", regCode("order shipped"), "snake_case"},
		{"empty", regCode(""), "snake_case"},
		{"status 200", mod("ok_code", func(c *server.Code) { c.Status = 200 }), "status 200"},
		{"status 600", mod("big_code", func(c *server.Code) { c.Status = 600 }), "status 600"},
		{"status unset", mod("no_status", func(c *server.Code) { c.Status = 0 }), "status 0"},
		{"category", mod("bad_category", func(c *server.Code) { c.Category = "oops" }), `unknown category "oops"`},
		{"severity", mod("bad_severity", func(c *server.Code) { c.Severity = "grave" }), `unknown severity "grave"`},
		{"warning", mod("warn_code", func(c *server.Code) { c.Severity = remedy.SeverityWarning }), "as a success"},
		{"info", mod("info_code", func(c *server.Code) { c.Severity = remedy.SeverityInfo }), "as a success"},
		{"fatal retryable", mod("fatal_code", func(c *server.Code) {
			c.Severity, c.Retryable = remedy.SeverityFatal, true
		}), "retryable contradicts severity fatal"},
		{"stability", mod("bad_stability", func(c *server.Code) { c.Stability = "gold" }), `unknown stability "gold"`},
		{"unknown related", mod("lonely", func(c *server.Code) { c.Related = []string{"nope"} }), `related code "nope" is not registered`},
		{"self related", mod("narcissus", func(c *server.Code) { c.Related = []string{"narcissus"} }), "relates to itself"},
		{"related twice", mod("echo", func(c *server.Code) { c.Related = []string{"conflict", "conflict"} }), `related code "conflict" listed twice`},
		{"built-in duplicate", regCode("rate_limited"), "already registered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := server.NewRegistry()
			before := reg.Codes()
			good := regCode("order_shipped")
			err := reg.Register(good, tc.code)
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", tc.code.Code), "the error names the code")
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), `"order_shipped"`, "the good code is not blamed")
			_, ok := reg.Lookup("order_shipped")
			assert.False(t, ok, "all or nothing: the good code is not added either")
			assert.Equal(t, before, reg.Codes(), "the registry is unchanged")
		})
	}
}

func TestRegisterDuplicates(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	require.NoError(t, reg.Register(regCode("order_shipped")))

	err := reg.Register(regCode("order_shipped"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"order_shipped"`)
	assert.Contains(t, err.Error(), "already registered")

	err = reg.Register(regCode("order_lost"), regCode("order_lost"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"order_lost"`)
	assert.Contains(t, err.Error(), "registered twice in this call")
	_, ok := reg.Lookup("order_lost")
	assert.False(t, ok)
}

func TestRegisterReportsEveryRefusal(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	bad1, bad2 := regCode("Bad"), regCode("also_bad")
	bad2.Status = 302
	err := reg.Register(bad1, bad2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"Bad"`)
	assert.Contains(t, err.Error(), `"also_bad"`)
	assert.Contains(t, err.Error(), "status 302")
}

func TestRegisterRelatedInSameCall(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	a, b := regCode("order_shipped"), regCode("order_returned")
	a.Related = []string{"order_returned", "conflict"} // later in the call, and a built-in
	b.Related = []string{"order_shipped"}
	require.NoError(t, reg.Register(a, b))
	got, ok := reg.Lookup("order_shipped")
	require.True(t, ok)
	assert.Equal(t, []string{"order_returned", "conflict"}, got.Related)
}

func TestRegisterDefaultsAndCopies(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	c := regCode("order_shipped")
	c.Related = []string{"conflict"}
	require.NoError(t, reg.Register(c))
	c.Related[0] = "changed" // the caller's slice is not the registry's

	got, ok := reg.Lookup("order_shipped")
	require.True(t, ok)
	assert.Equal(t, remedy.SeverityError, got.Severity)
	assert.Equal(t, server.Stable, got.Stability)
	assert.Equal(t, []string{"conflict"}, got.Related)

	beta := regCode("order_split")
	beta.Severity, beta.Stability = remedy.SeverityFatal, server.Beta
	require.NoError(t, reg.Register(beta))
	got, _ = reg.Lookup("order_split")
	assert.Equal(t, remedy.SeverityFatal, got.Severity, "a set severity is kept")
	assert.Equal(t, server.Beta, got.Stability)
}

func TestZeroRegistry(t *testing.T) {
	t.Parallel()
	var reg server.Registry
	_, ok := reg.Lookup("rate_limited")
	assert.False(t, ok, "the zero registry holds no built-ins")
	assert.Empty(t, reg.Codes())
	c := regCode("order_shipped")
	c.Related = []string{"rate_limited"}
	assert.Error(t, reg.Register(c), "related codes must exist in this registry")
	c.Related = nil
	require.NoError(t, reg.Register(c))
	_, ok = reg.Lookup("order_shipped")
	assert.True(t, ok)
}

func TestDocsBase(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	own := regCode("order_shipped")
	own.DocsURL = "https://shop.example.com/help/shipped"
	require.NoError(t, reg.Register(own))

	reg.SetDocsBase("https://docs.example.com/errors")
	require.NoError(t, reg.Register(regCode("order_lost")))
	for code, want := range map[string]string{
		"rate_limited":  "https://docs.example.com/errors#rate_limited",
		"order_lost":    "https://docs.example.com/errors#order_lost", // registered after the base
		"order_shipped": "https://shop.example.com/help/shipped",      // its own URL wins
	} {
		c, _ := reg.Lookup(code)
		assert.Equal(t, want, c.DocsURL, code)
		assert.Equal(t, want, c.Envelope("").DocsURL, code)
	}
	for _, c := range reg.Codes() {
		assert.NotEmpty(t, c.DocsURL, "Codes carries the derived URLs: %s", c.Code)
	}

	reg.SetDocsBase("https://v2.example.com/errors")
	c, _ := reg.Lookup("rate_limited")
	assert.Equal(t, "https://v2.example.com/errors#rate_limited", c.DocsURL, "a new base replaces the old one")

	reg.SetDocsBase("")
	c, _ = reg.Lookup("rate_limited")
	assert.Empty(t, c.DocsURL, "no base, no derived URL")
	c, _ = reg.Lookup("order_shipped")
	assert.Equal(t, own.DocsURL, c.DocsURL)
}

func TestCodeEnvelope(t *testing.T) {
	t.Parallel()
	c := server.Code{
		Code: "order_shipped", Status: 409, Title: "Order shipped", Category: remedy.CategoryState,
		Hint: "Create a return instead.", Cause: "The order has shipped.", Related: []string{"conflict"},
	}
	e := c.Envelope("")
	assert.Equal(t, "The order has shipped.", e.Message, "the cause stands in for a missing message")
	assert.Equal(t, remedy.SeverityError, e.Severity, "severity defaults even outside a registry")
	assert.Equal(t, remedy.RetryFromBody, e.RetrySource)
	assert.False(t, e.Retryable)
	e.RelatedCodes[0] = "changed"
	assert.Equal(t, "conflict", c.Related[0], "the envelope has its own related codes")

	assert.Equal(t, "Order ord_1 shipped on 2 May.", c.Envelope("Order ord_1 shipped on 2 May.").Message)
	assert.Equal(t, "order_shipped (409): The order has shipped.", c.Envelope("").Error())
}

func TestRegistryConcurrent(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	const writers, perWriter, readers = 8, 25, 8
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				c := regCode(fmt.Sprintf("app_%d_%d", w, i))
				c.Related = []string{"conflict"}
				assert.NoError(t, reg.Register(c))
				if i%10 == 0 {
					reg.SetDocsBase(fmt.Sprintf("https://docs.example.com/v%d", i))
				}
			}
		}()
	}
	var rg sync.WaitGroup
	for r := range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				c, ok := reg.Lookup("rate_limited")
				if !assert.True(t, ok) || !assert.Equal(t, 429, c.Status) {
					return
				}
				if own, ok := reg.Lookup(fmt.Sprintf("app_%d_%d", r%writers, n%perWriter)); ok {
					assert.Equal(t, "Order shipped", own.Title)
				}
				if n%50 == 0 {
					codes := reg.Codes()
					assert.GreaterOrEqual(t, len(codes), len(registryBuiltins))
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	assert.Len(t, reg.Codes(), len(registryBuiltins)+writers*perWriter)
	for w := range writers {
		for i := range perWriter {
			_, ok := reg.Lookup(fmt.Sprintf("app_%d_%d", w, i))
			assert.True(t, ok)
		}
	}
}

var regLookupSink server.Code

func TestLookupDoesNotAllocate(t *testing.T) {
	reg := server.NewRegistry()
	reg.SetDocsBase("https://docs.example.com/errors")
	allocs := testing.AllocsPerRun(1000, func() {
		regLookupSink, _ = reg.Lookup("rate_limited")
		regLookupSink, _ = reg.Lookup("no_such_code")
	})
	assert.Zero(t, allocs)
}

func BenchmarkLookup(b *testing.B) {
	reg := server.NewRegistry()
	reg.SetDocsBase("https://docs.example.com/errors")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var c server.Code
		for pb.Next() {
			c, _ = reg.Lookup("rate_limited")
		}
		_ = c
	})
}

// An application registers its own code beside the built-ins, then answers with its envelope.
func ExampleRegistry_Register() {
	reg := server.NewRegistry()
	err := reg.Register(server.Code{
		Code:     "order_shipped",
		Status:   409,
		Title:    "Order shipped",
		Category: remedy.CategoryState,
		// Not retryable: no change to this call can make it succeed.
		Retryable: false,
		Hint:      "Create a return with create_return instead of changing the order.",
		Cause:     "The order has shipped and can no longer be changed.",
		Repair:    "1. Call create_return with the order's id.\n2. Place a new order for the changed items.",
		Related:   []string{"conflict"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg.SetDocsBase("https://shop.example.com/docs/errors")

	c, _ := reg.Lookup("order_shipped")
	body, _ := c.Envelope("Order ord_42 shipped on 2 May.").MarshalJSON()
	fmt.Println(string(body))
	// Output:
	// {"error":{"statusCode":409,"code":"order_shipped","title":"Order shipped","message":"Order ord_42 shipped on 2 May.","retryable":false,"hint":"Create a return with create_return instead of changing the order.","severity":"error","category":"state","docs_url":"https://shop.example.com/docs/errors#order_shipped","related_codes":["conflict"]}}
}

// A code registered without a title gets its code in words.
func TestRegisterDefaultTitle(t *testing.T) {
	t.Parallel()
	reg := server.NewRegistry()
	require.NoError(t, reg.Register(server.Code{Code: "card_declined", Status: 402}))
	c, ok := reg.Lookup("card_declined")
	require.True(t, ok)
	assert.Equal(t, "Card declined", c.Title)
}

// A handler that returns a code its operation does not declare (server.Errors) is answered
// with that code all the same, and the API's logger warns of it once per operation and code:
// the OpenAPI document and the MCP tool description do not list it (issue 40).
func TestUndeclaredCodeWarnsOnce(t *testing.T) {
	t.Parallel()
	var logs safeBuffer
	api, err := server.New(server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	type in struct {
		ID string `path:"id"`
	}
	require.NoError(t, server.Get(api, "/v1/orders/{id}", func(ctx context.Context, in in) (map[string]any, error) {
		return nil, server.Error("payment_required", "order "+in.ID+" is not paid")
	}, server.OperationID("get_order")))
	for range 3 {
		w := httptest.NewRecorder()
		api.ServeHTTP(w, httptest.NewRequest("GET", "/v1/orders/ord_1", nil))
		assert.Equal(t, 402, w.Code)
		assert.Contains(t, w.Body.String(), `"code":"payment_required"`)
	}
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "does not declare"), out)
	assert.Contains(t, out, "operation=get_order")
	assert.Contains(t, out, "code=payment_required")

	doc, err := api.OpenAPI()
	require.NoError(t, err)
	assert.NotContains(t, string(doc), "payment_required", "an undeclared code is not in the document: hence the warning")
}

// safeBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
