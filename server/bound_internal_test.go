package server

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
)

// The issues kept past the bound are the first in path order, the same whatever order the
// validator finds them in (it walks maps in random order), and the marker counts the rest.
func TestValidateBoundDeterministic(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	var items []string
	for range 300 {
		items = append(items, `{"sku":"x","quantity":0,"a":1}`)
	}
	extra := make([]string, 40)
	for i := range extra {
		extra[i] = fmt.Sprintf(`"x%02d":1`, i)
	}
	in := vtDecode(t, `{"id":"ord_1","customer_id":"cus_1","currency":"usd","items":[`+strings.Join(items, ",")+`],`+
		strings.Join(extra, ",")+`}`)
	first, _, total, atLeast := v.checkPruned(in, -1) // validated whole
	require.False(t, atLeast)
	require.Len(t, first, MaxIssues+1)
	// The root's one issue for its 40 unknown members, maxItems, then three issues an item.
	assert.Equal(t, 1+1+3*300, total)
	assert.Equal(t, "", first[0].Path)
	assert.Equal(t, "/items", first[1].Path)
	assert.Equal(t, "/items/0/a", first[2].Path)
	assert.Equal(t, "/items/32/quantity", first[MaxIssues-1].Path)
	last := first[MaxIssues]
	assert.Equal(t, remedy.Issue{Code: TooManyIssues, Message: fmt.Sprintf(
		"%d more issues found and not listed: only the first 100 are; repair those and send the call again to learn the rest",
		total-MaxIssues)}, last)
	// Pruned, as the pipeline validates an instance this large: the same issues are listed,
	// and the marker says how many more there are at least.
	pruned, _, n, atLeast := v.check(in)
	require.True(t, atLeast)
	assert.Equal(t, first[:MaxIssues], pruned[:MaxIssues])
	assert.Greater(t, n, MaxIssues)
	assert.Less(t, n, total, "the issues found before the cut")
	assert.Equal(t, fmt.Sprintf("at least %d more issues found and not listed: only the first 100 are; repair those and send the call again to learn the rest",
		n-MaxIssues), pruned[MaxIssues].Message)
	for range 5 {
		again, _, n2, _ := v.checkPruned(in, -1)
		require.Equal(t, first, again)
		require.Equal(t, total, n2)
		again, _, n2, _ = v.check(in)
		require.Equal(t, pruned, again)
		require.Equal(t, n, n2)
	}
}

// Eleven unknown members or more are one issue at their object, quoting the first ten in path
// order; ten or fewer keep an issue each.
func TestValidateUnknownMembersCollapsed(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	base := `"id":"ord_1","customer_id":"cus_1","currency":"usd","items":[{"sku":"sku_a","quantity":1}]`
	members := func(n int) string {
		var b strings.Builder
		for i := n - 1; i >= 0; i-- {
			fmt.Fprintf(&b, `,"m%02d":%d`, i, i)
		}
		return b.String()
	}
	issues, _ := v.validate(vtDecode(t, `{`+base+members(10)+`}`))
	require.Len(t, issues, 10)
	assert.Equal(t, "/m00", issues[0].Path)
	assert.JSONEq(t, `0`, string(issues[0].Received))

	issues, violated := v.validate(vtDecode(t, `{`+base+members(11)+`,"it's":1}`))
	require.Len(t, issues, 1)
	assert.Equal(t, "", issues[0].Path)
	assert.Equal(t, "additional_properties", issues[0].Code)
	assert.JSONEq(t, `{"additionalProperties":false}`, string(issues[0].Expected))
	assert.True(t, strings.HasPrefix(issues[0].Message,
		`the input has 12 properties that are not allowed: "it's", 'm00', 'm01', 'm02', 'm03', 'm04', 'm05', 'm06', 'm07', 'm08' and 2 more (allowed: `),
		issues[0].Message)
	assert.NotEmpty(t, violated)
}

// What an issue echoes of a long name is cut at issueMaxEcho bytes, and a long value is not
// echoed at all.
func TestValidateEchoBounded(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	long := strings.Repeat("é", 10000)
	in := vtDecode(t, `{"id":"ord_1","customer_id":"cus_1","currency":"usd","items":[{"sku":"sku_a","quantity":1,"`+long+`":{"`+long+`~/":1}}]}`)
	issues, _ := v.validate(in)
	require.Len(t, issues, 1)
	is := issues[0]
	assert.LessOrEqual(t, len(is.Path), issueMaxEcho)
	assert.True(t, strings.HasPrefix(is.Path, "/items/0/éé"), is.Path)
	assert.True(t, strings.HasSuffix(is.Path, "…"), is.Path)
	assert.True(t, utf8.ValidString(is.Path))
	assert.Less(t, len(is.Message), 3*issueMaxEcho)
	assert.Nil(t, is.Received, "larger than issueMaxReceived")
}

// Received is what encoding/json writes, or nothing when that is over the bound.
func TestIssueReceivedBounded(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`null`, `true`, `"a<b>&\u2028\n"`, `[1,"x",{"b":1,"a":[]}]`, `{"z":{"y":"é"},"a":-1.5e3}`} {
		v := vtDecode(t, s)
		want, err := json.Marshal(v)
		require.NoError(t, err)
		enc := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(want))
		assert.Equal(t, enc, string(issueReceived(v)), s)
	}
	big := make([]any, 600)
	for i := range big {
		big[i] = json.Number("1")
	}
	assert.Nil(t, issueReceived(big))
	assert.Nil(t, issueReceived(map[string]any{"a": strings.Repeat("x", issueMaxReceived)}))
	assert.Nil(t, issueReceived([]any{json.Number("1e400")}))
}

// FuzzIssuePointer checks the pointers and labels of any tokens: at most issueMaxEcho bytes,
// UTF-8 when the tokens are, never ending inside an escape, and whole when they fit.
func FuzzIssuePointer(f *testing.F) {
	f.Add("a\x00b/c~d\x00" + strings.Repeat("é", 120))
	f.Add(strings.Repeat("~", 300))
	f.Add("items\x000\x00sku")
	f.Fuzz(func(t *testing.T, s string) {
		toks := strings.Split(s, "\x00")
		p, l := issuePointer(toks), issueLabel(toks)
		for _, out := range []string{p, l, clip(s)} {
			if len(out) > issueMaxEcho {
				t.Fatalf("%d bytes: %q", len(out), out)
			}
			if utf8.ValidString(s) && !utf8.ValidString(out) {
				t.Fatalf("not UTF-8: %q", out)
			}
		}
		if full := pointerJoin(toks); len(full) <= issueMaxEcho {
			if p != full {
				t.Fatalf("cut a pointer that fits: %q, not %q", p, full)
			}
		} else if !strings.HasSuffix(p, "…") || !vtValidPointer(strings.TrimSuffix(p, "…")) ||
			!strings.HasPrefix(full, strings.TrimSuffix(p, "…")) {
			t.Fatalf("bad cut %q of %q", p, full)
		}
	})
}

// FuzzPathSegment checks the path parameter check: it never panics, and what it lets through
// decodes to one segment a handler can use as it is.
func FuzzPathSegment(f *testing.F) {
	f.Add("..%2f..%2fetc%2fpasswd")
	f.Add("%2e%2E")
	f.Add("a%00b")
	f.Add("ord_1%20x")
	f.Add("%zz")
	op := &Operation{route: []segment{{lit: "v1"}, {param: "id"}}}
	f.Fuzz(func(t *testing.T, raw string) {
		bad := op.pathIssues([]string{raw})
		val, err := url.PathUnescape(raw)
		if len(bad) > 0 {
			if bad[0].Path != "/id" || bad[0].Code != "invalid_path_segment" {
				t.Fatalf("%+v", bad[0])
			}
			return
		}
		if err != nil || val == "." || val == ".." || strings.ContainsAny(val, `/\`) ||
			strings.ContainsFunc(val, unicode.IsControl) || !utf8.ValidString(val) {
			t.Fatalf("let %q through as %q", raw, val)
		}
	})
}
