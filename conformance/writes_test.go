package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/conformance"
	"github.com/remedy-go/remedy/internal/testkit/plainapi"
)

func plainCredentials() conformance.Options {
	return conformance.Options{Header: map[string][]string{"Authorization": {"Bearer " + plainapi.Token}}}
}

// Issue 35, row 14: without Writes, a plain API that validates nothing runs none of its
// operations that change state, though the probe acts with credentials that would let them
// run; the checks that would have are listed as skipped, operation by operation.
func TestWithoutWritesNothingExecutes(t *testing.T) {
	t.Parallel()
	api := plainapi.Start(t)
	rep, err := conformance.Run(context.Background(), api.URL, plainCredentials())
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text, conformance.TextOptions{Verbose: true}))

	assert.Empty(t, api.Executed(), "handlers of operations that change state ran without Writes\n%s", text.String())
	// The two operations that need credentials were each sent one request without any.
	assert.Equal(t, []string{"", ""}, api.Refused())
	for _, op := range unsafeOps {
		assert.Regexp(t, `SKIP invalid-input-refused.*: needs Options.Writes \(remedy probe --writes\): would send `+regexp.QuoteMeta(op),
			text.String(), "the skipped checks of %s are listed", op)
	}
	for _, id := range []string{"invalid-input-refused", "issues-point-at-fields", "schema-inline"} {
		res, _ := rep.Result(id)
		for _, op := range unsafeOps {
			assert.True(t, slices.ContainsFunc(res.Skipped, func(s string) bool { return strings.Contains(s, "would send "+op) }),
				"%s lists the skipped checks of %s: %q", id, op, res.Skipped)
		}
	}
	// The read-only operations are probed as ever: a plain API executes their invalid input.
	res, _ := rep.Result("invalid-input-refused")
	assert.Equal(t, conformance.Fail, res.Outcome, res.Detail)
	assert.Contains(t, res.Detail, "GET /orders (list_orders)")
}

var unsafeOps = []string{"POST /payments (create_payment)", "POST /emails (send_email)",
	"PUT /orders/{id} (update_order)", "DELETE /orders/{id} (cancel_order)"}

// The requests without credentials carry none of any kind: not the caller's headers, not the
// user of the base URL, not a cookie of the caller's client.
func TestWithoutWritesNoCredentialsAreSent(t *testing.T) {
	t.Parallel()
	api := plainapi.Start(t)
	u, err := url.Parse(api.URL)
	require.NoError(t, err)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	jar.SetCookies(u, []*http.Cookie{{Name: "session", Value: "s3cret"}})
	opts := plainCredentials()
	opts.HTTPClient = &http.Client{Jar: jar}
	u.User = url.UserPassword("probe", "s3cret")
	_, err = conformance.Run(context.Background(), u.String(), opts)
	require.NoError(t, err)
	assert.Empty(t, api.Executed())
	assert.Equal(t, []string{"", ""}, api.Refused(), "the credentials the refused requests carried")
}

// authorizing adds the bearer token to every request, as an OAuth transport does.
type authorizing struct{}

func (authorizing) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+plainapi.Token)
	return http.DefaultTransport.RoundTrip(r)
}

// A client whose transport may add credentials cannot send a request without them: none is
// sent, and the report says why.
func TestWithoutWritesAnOpaqueTransportSendsNothing(t *testing.T) {
	t.Parallel()
	api := plainapi.Start(t)
	rep, err := conformance.Run(context.Background(), api.URL, conformance.Options{HTTPClient: &http.Client{Transport: authorizing{}}})
	require.NoError(t, err)
	assert.Empty(t, api.Executed())
	assert.Empty(t, api.Refused())
	res, _ := rep.Result("invalid-input-refused")
	assert.Contains(t, strings.Join(res.Skipped, "\n"), "POST /payments (create_payment) invalid requests")
	assert.Contains(t, strings.Join(res.Skipped, "\n"), "Options.HTTPClient's transport may add some")
}

// With Writes the same run sends the invalid requests, the plain API executes them, and the
// report holds every one of its findings.
func TestWithWritesEveryFindingIsReported(t *testing.T) {
	t.Parallel()
	api := plainapi.Start(t)
	opts := plainCredentials()
	opts.Writes = true
	rep, err := conformance.Run(context.Background(), api.URL, opts)
	require.NoError(t, err)
	for _, route := range plainapi.Unsafe {
		assert.Positive(t, api.Executed()[route], "%s ran none of the checks Writes allows", route)
	}

	var plain, verbose, js bytes.Buffer
	require.NoError(t, rep.WriteText(&plain, conformance.TextOptions{}))
	require.NoError(t, rep.WriteText(&verbose, conformance.TextOptions{Verbose: true}))
	require.NoError(t, rep.WriteJSON(&js))
	findings := jsonFindings(t, js.Bytes())
	payments := false
	for _, d := range findings["invalid-input-refused"] {
		payments = payments || strings.Contains(d, "POST /payments (create_payment) executed a request with")
	}
	assert.True(t, payments, "the JSON report names the payments executed with invalid input: %q", findings["invalid-input-refused"])
	checkEveryFinding(t, rep.Failed(), findings, plain.String(), verbose.String())
}

// jsonFindings reads the findings of each rule from a JSON report, by rule ID.
func jsonFindings(t *testing.T, js []byte) map[string][]string {
	t.Helper()
	var doc struct {
		Results []struct {
			ID       string `json:"id"`
			Findings []struct {
				Detail string `json:"detail"`
			} `json:"findings"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(js, &doc))
	out := map[string][]string{}
	for _, res := range doc.Results {
		for _, f := range res.Findings {
			out[res.ID] = append(out[res.ID], f.Detail)
		}
	}
	return out
}

var andMore = regexp.MustCompile(`\(and (\d+) more`)

// checkEveryFinding checks that, for each failed rule, the JSON report holds as many findings
// as the text reports, that the text says how to see them all, and that the verbose text shows
// each one.
func checkEveryFinding(t *testing.T, failed []string, findings map[string][]string, plain, verbose string) {
	t.Helper()
	require.NotEmpty(t, failed)
	many := false
	for _, id := range failed {
		line := ""
		for l := range strings.SplitSeq(plain, "\n") {
			if strings.HasPrefix(l, "FAIL "+id+": ") {
				line = l
			}
		}
		require.NotEmpty(t, line, "the text has no paragraph for %s:\n%s", id, plain)
		n := 1
		if m := andMore.FindStringSubmatch(line); m != nil {
			more, _ := strconv.Atoi(m[1])
			n += more
			many = true
			assert.Contains(t, line, "--verbose", "the text says how to see the %d findings of %s", n, id)
		}
		assert.Len(t, findings[id], n, "the JSON holds every finding of %s the text counts: %s", id, line)
		times := map[string]int{}
		for _, d := range findings[id] {
			times[d]++
		}
		for d, k := range times {
			assert.GreaterOrEqual(t, strings.Count(verbose, d), k, "the verbose text shows every finding of %s: %q", id, d)
		}
	}
	assert.True(t, many, "no rule had more findings than the text shows: the test proves nothing")
	assert.NotRegexp(t, andMore, verbose, "the verbose text shows every finding, not a count of the rest")
}
