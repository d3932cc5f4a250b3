package rewrite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/sjson"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/rewrite"
)

func TestSJSONPath(t *testing.T) {
	tests := []struct {
		name, doc, pointer string
		path               string // "" when the pointer has no sjson path
		cur                string // the value there, "" when absent
		set                string // doc after setting "X" at path
	}{
		{"member", `{"a":1}`, "/a", "a", "1", `{"a":"X"}`},
		{"new member", `{"a":1}`, "/b", "b", "", `{"a":1,"b":"X"}`},
		{"array index", `{"items":[{},{},{"quantity":250}]}`, "/items/2/quantity", "items.2.quantity", "250",
			`{"items":[{},{},{"quantity":"X"}]}`},
		{"numeric key in an object", `{"m":{"2":"x"}}`, "/m/2", "m.:2", `"x"`, `{"m":{"2":"X"}}`},
		{"numeric key is added to an object", `{"m":{}}`, "/m/0", "m.:0", "", `{"m":{"0":"X"}}`},
		{"missing containers are objects", `{}`, "/a/0/b", "a.:0.b", "", `{"a":{"0":{"b":"X"}}}`},
		{"-1 is a key, not the last element", `{"m":{"-1":true}}`, "/m/-1", "m.:-1", "true", `{"m":{"-1":"X"}}`},
		{"~1 is a slash", `{"a/b":1}`, "/a~1b", `a\/b`, "1", `{"a/b":"X"}`},
		{"~0 is a tilde", `{"a~b":1}`, "/a~0b", `a\~b`, "1", `{"a~b":"X"}`},
		{"~01 is a tilde and a 1", `{"~1":1}`, "/~01", `\~1`, "1", `{"~1":"X"}`},
		{"dot", `{"a.b":1,"a":{"b":2}}`, "/a.b", `a\.b`, "1", `{"a.b":"X","a":{"b":2}}`},
		{"wildcards", `{"*":1,"a?":2}`, "/a?", `a\?`, "2", `{"*":1,"a?":"X"}`},
		{"star", `{"*":1,"b":2}`, "/*", `\*`, "1", `{"*":"X","b":2}`},
		{"pipe, hash, at", `{"a|b":{"#":{"@this":1}}}`, "/a|b/#/@this", `a\|b.\#.\@this`, "1",
			`{"a|b":{"#":{"@this":"X"}}}`},
		{"backslash", `{"a\\b":1}`, `/a\b`, `a\\b`, "1", `{"a\\b":"X"}`},
		{"leading colon", `{":x":1}`, "/:x", `\:x`, "1", `{":x":"X"}`},
		{"inner colon", `{"a:b":1}`, "/a:b", "a:b", "1", `{"a:b":"X"}`},
		{"quote and space", `{"say \"hi\"":1}`, `/say "hi"`, `say \"hi\"`, "1", `{"say \"hi\"":"X"}`},
		{"non-ASCII", `{"prénom":"x"}`, "/prénom", "prénom", `"x"`, `{"prénom":"X"}`},
		{"brackets and braces", `{"[0]":1,"{a}":2}`, "/{a}", `\{a\}`, "2", `{"[0]":1,"{a}":"X"}`},
		{"modifier-like", `{"a":{"@reverse":1}}`, "/a/@reverse", `a.\@reverse`, "1", `{"a":{"@reverse":"X"}}`},
		{"nested arrays", `{"a":[[1,2],[3]]}`, "/a/0/1", "a.0.1", "2", `{"a":[[1,"X"],[3]]}`},

		{"index past the end", `{"items":[1]}`, "/items/1", "", "", ""},
		{"append", `{"items":[1]}`, "/items/-", "", "", ""},
		{"leading zero", `{"items":[1,2]}`, "/items/01", "", "", ""},
		{"key into an array", `{"items":[1]}`, "/items/a", "", "", ""},
		{"through a string", `{"a":"s"}`, "/a/b", "", "", ""},
		{"through null", `{"a":null}`, "/a/b", "", "", ""},
		{"bad escape", `{"a":1}`, "/a~2", "", "", ""},
		{"dangling tilde", `{"a":1}`, "/a~", "", "", ""},
		{"empty key", `{"a":{"":1}}`, "/a/", "", "", ""},
		{"whole document", `{"a":1}`, "", "", "", ""},
		{"not a pointer", `{"a":1}`, "a", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, cur, ok := rewrite.SJSONPath(tt.doc, tt.pointer)
			if tt.path == "" {
				assert.False(t, ok, "path %q", path)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.path, path)
			if tt.cur == "" {
				assert.False(t, cur.Exists(), "value %s", cur.Raw)
			} else {
				assert.Equal(t, tt.cur, cur.Raw)
			}
			out, err := sjson.SetRaw(tt.doc, path, `"X"`)
			require.NoError(t, err)
			assert.JSONEq(t, tt.set, out)
			if tt.cur != "" {
				del, err := sjson.Delete(tt.doc, path)
				require.NoError(t, err)
				_, after, _ := rewrite.SJSONPath(del, tt.pointer)
				assert.False(t, after.Exists(), "deleted: %s", del)
			}
		})
	}
}

// rewriteCase is one failure, as the server wrote it, and the repair expected for args.
type rewriteCase struct {
	name    string
	status  int
	body    string
	args    string
	want    string       // "" when the rewriter must give up
	changes []changeView // the changes it must report, in order; none when it gives up
}

// changeView is a Change as the tables state it: the values as compact JSON text ("" for
// nil), the reason left out.
type changeView struct {
	Path, Rule, Old, New string
	Lossy                bool
}

func lossless(path, rule, old, new string) changeView {
	return changeView{Path: path, Rule: rule, Old: old, New: new}
}

func lossy(path, rule, old, new string) changeView {
	return changeView{Path: path, Rule: rule, Old: old, New: new, Lossy: true}
}

func viewChanges(cs []rewrite.Change) []changeView {
	var out []changeView
	for _, c := range cs {
		out = append(out, changeView{Path: c.Path, Rule: c.Rule, Old: string(c.Old), New: string(c.New), Lossy: c.Lossy})
	}
	return out
}

// rewriteOnce parses body and runs Default on args; the Rewrite carries the Changes.
func rewriteOnce(t *testing.T, status int, body, args string) (json.RawMessage, *rewrite.Request) {
	t.Helper()
	e, ok := remedy.Parse(status, http.Header{"Content-Type": {"application/json"}}, []byte(body))
	require.True(t, ok)
	require.NotEqual(t, remedy.DialectUnstructured, e.Dialect, "the body must be read")
	r := &rewrite.Request{Operation: "op", Args: json.RawMessage(args), Envelope: e, Attempt: 1}
	out, err := rewrite.Default.Rewrite(context.Background(), r)
	require.NoError(t, err)
	return out, r
}

func runRewriteCases(t *testing.T, tests []rewriteCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, r := rewriteOnce(t, tt.status, tt.body, tt.args)
			if tt.want == "" {
				assert.Nil(t, out, "issues %+v", r.Envelope.Issues)
				assert.Nil(t, r.Changes, "a rewriter that gives up reports no change")
				return
			}
			require.NotNil(t, out, "issues %+v", r.Envelope.Issues)
			assert.JSONEq(t, tt.want, string(out))
			assert.Equal(t, tt.changes, viewChanges(r.Changes))
			if err := checkChanges([]byte(tt.args), out, r.Changes); err != nil {
				t.Error(err)
			}
		})
	}
}

// lossyRules are the rules whose changes may alter what a call means, as Change documents them.
var lossyRules = map[string]bool{"clamp": true, "truncate": true, "drop_unknown": true, "example": true, "choose_allowed": true}

var losslessRules = map[string]bool{"suggested_value": true, "only_allowed_value": true, "enum_match": true, "coerce": true, "default": true}

// checkChanges verifies that changes account for what Default did to args: each names
// a rule with its lossiness, Old is what args held at Path (nil: nothing) and New what out
// holds there (nil: nothing), no change lies inside another, and a give-up reports none.
// changesNumber reports whether a change puts another number in place of a number.
func changesNumber(old, new json.RawMessage) bool {
	var a, b any
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(new, &b) != nil {
		return false
	}
	x, ok1 := a.(float64)
	y, ok2 := b.(float64)
	return ok1 && ok2 && x != y
}

func checkChanges(args, out []byte, changes []rewrite.Change) error {
	if out == nil {
		if changes != nil {
			return fmt.Errorf("gave up but reported %d changes", len(changes))
		}
		return nil
	}
	if len(changes) == 0 {
		return fmt.Errorf("repaired without reporting a change: %s", out)
	}
	for i, c := range changes {
		if !lossyRules[c.Rule] && !losslessRules[c.Rule] {
			return fmt.Errorf("change %d: unknown rule %q", i, c.Rule)
		}
		// A suggested number in place of another is the one rule whose lossiness depends on
		// the values: another amount is a proposal.
		if c.Rule == "suggested_value" {
			if lossy := changesNumber(c.Old, c.New); c.Lossy != lossy {
				return fmt.Errorf("change %d: suggested_value from %s to %s marked lossy=%v", i, c.Old, c.New, c.Lossy)
			}
		} else if c.Lossy != lossyRules[c.Rule] {
			return fmt.Errorf("change %d: rule %s marked lossy=%v", i, c.Rule, c.Lossy)
		}
		if c.Old == nil && c.New == nil {
			return fmt.Errorf("change %d at %q changes nothing", i, c.Path)
		}
		if before := valueAt(args, c.Path); before != string(c.Old) {
			return fmt.Errorf("change %d at %q: old %s, but the arguments held %s", i, c.Path, c.Old, before)
		}
		if after := valueAt(out, c.Path); after != string(c.New) {
			return fmt.Errorf("change %d at %q: new %s, but the repair holds %s", i, c.Path, c.New, after)
		}
		for j, d := range changes {
			if j != i && (c.Path == d.Path || strings.HasPrefix(c.Path, d.Path+"/")) {
				return fmt.Errorf("change %d at %q lies inside change %d at %q", i, c.Path, j, d.Path)
			}
		}
	}
	return nil
}

// valueAt is the compact JSON doc holds at pointer, "" when it holds nothing there.
func valueAt(doc []byte, pointer string) string {
	raw := string(doc)
	if pointer != "" {
		_, cur, ok := rewrite.SJSONPath(raw, pointer)
		if !ok || !cur.Exists() {
			return ""
		}
		raw = cur.Raw
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(raw)) != nil {
		return ""
	}
	return b.String()
}

func TestDefaultRewriterSuggestedAndAllowed(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "agent error spec suggested value",
		status: 400,
		body: `{"error":{"code":"invalid_currency","message":"Currency 'US$' is not supported for this account.",
			"field":"currency","allowed_values":["usd","eur","gbp","cad"],"suggested_value":"usd",
			"retryable":true,"category":"validation"}}`,
		args:    `{"amount":2500,"currency":"US$","customer":"cus_Q8rT2xYb"}`,
		want:    `{"amount":2500,"currency":"usd","customer":"cus_Q8rT2xYb"}`,
		changes: []changeView{lossless("/currency", "suggested_value", `"US$"`, `"usd"`)},
	}, {
		name:   "agent envelope suggested values, nested and numeric",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","message":"2 issues","issues":[
			{"path":["items",0,"sku"],"code":"pattern","expected":{"pattern":"^[A-Z]{3}-[0-9]+$"},"received":"abc","suggested_value":"ABC-123"},
			{"path":["items",2,"quantity"],"code":"maximum","expected":{"maximum":100},"received":250,"suggested_value":100}]}}`,
		args:    `{"items":[{"sku":"abc"},{"sku":"DEF-1"},{"sku":"GHI-2","quantity":250}]}`,
		want:    `{"items":[{"sku":"ABC-123"},{"sku":"DEF-1"},{"sku":"GHI-2","quantity":100}]}`,
		changes: []changeView{lossless("/items/0/sku", "suggested_value", `"abc"`, `"ABC-123"`), lossy("/items/2/quantity", "suggested_value", `250`, `100`)},
	}, {
		name:   "a cut list: the issues listed are repaired, the marker is not an issue",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","message":"150 issues","issues":[
			{"path":["currency"],"code":"enum","allowed_values":["usd"]},
			{"path":[],"code":"too_many_issues","message":"149 more issues found and not listed"}]}}`,
		args:    `{"amount":100,"currency":"eur"}`,
		want:    `{"amount":100,"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "only_allowed_value", `"eur"`, `"usd"`)},
	}, {
		name:   "a single allowed value",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","message":"currency must be usd",
			"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd"]}],"retryable":false}}`,
		args:    `{"amount":100,"currency":"eur"}`,
		want:    `{"amount":100,"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "only_allowed_value", `"eur"`, `"usd"`)},
	}, {
		name:   "a single allowed value in RFC 9457 invalid_fields, dotted path",
		status: 400,
		body: `{"type":"https://api.example.com/problems/invalid-request-body","title":"Request body failed validation",
			"status":400,"invalid_fields":[{"field":"body.items[3].tags","reason":"must be gift_wrap","valid_values":["gift_wrap"]}]}`,
		args:    `{"items":[{},{},{},{"tags":"Gift-Wrap"}]}`,
		want:    `{"items":[{},{},{},{"tags":"gift_wrap"}]}`,
		changes: []changeView{lossless("/items/3/tags", "only_allowed_value", `"Gift-Wrap"`, `"gift_wrap"`)},
	}, {
		name:   "a suggested object is set whole",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["shipping"],"code":"invalid",
			"suggested_value":{"country":"FR","postal_code":"75001"}}]}}`,
		args:    `{"shipping":"Paris"}`,
		want:    `{"shipping":{"country":"FR","postal_code":"75001"}}`,
		changes: []changeView{lossless("/shipping", "suggested_value", `"Paris"`, `{"country":"FR","postal_code":"75001"}`)},
	}, {
		name:   "a suggestion for a missing field creates the objects on its path",
		status: 400,
		body: `{"error":{"code":"missing_field","message":"metadata.source is required",
			"field":"metadata.source","suggested_value":"api"}}`,
		args:    `{"amount":1}`,
		want:    `{"amount":1,"metadata":{"source":"api"}}`,
		changes: []changeView{lossless("/metadata/source", "suggested_value", ``, `"api"`)},
	}, {
		name:   "a value listed twice is one allowed value",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["currency"],"code":"enum",
			"allowed_values":["usd","usd"]}]}}`,
		args:    `{"currency":"eur"}`,
		want:    `{"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "only_allowed_value", `"eur"`, `"usd"`)},
	}, {
		name:   "the same suggestion twice still repairs",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[
			{"path":["unit"],"code":"enum","suggested_value":"box"},
			{"path":["unit"],"code":"enum","allowed_values":["box"]}]}}`,
		args:    `{"unit":"boxes"}`,
		want:    `{"unit":"box"}`,
		changes: []changeView{lossless("/unit", "suggested_value", `"boxes"`, `"box"`)},
	}})
}

func TestDefaultRewriterExampleRequest(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "the body of an example HTTP request",
		status: 400,
		body: `{"error":{"code":"invalid_customer","message":"Customer 'Ada' does not exist.","field":"customer",
			"category":"validation","example_request":{"method":"POST","path":"/v1/payments",
			"body":{"amount":2500,"currency":"usd","customer":"cus_Q8rT2xYb"}}}}`,
		args:    `{"amount":2500,"currency":"usd","customer":"Ada"}`,
		want:    `{"amount":2500,"currency":"usd","customer":"cus_Q8rT2xYb"}`,
		changes: []changeView{lossy("/customer", "example", `"Ada"`, `"cus_Q8rT2xYb"`)},
	}, {
		name:   "an example of the arguments themselves, nested",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["schedule","cron"],"code":"invalid_format",
			"message":"not a cron expression"}],"example_request":{"schedule":{"cron":"0 9 * * 1"}}}}`,
		args:    `{"schedule":{"cron":"every monday"}}`,
		want:    `{"schedule":{"cron":"0 9 * * 1"}}`,
		changes: []changeView{lossy("/schedule/cron", "example", `"every monday"`, `"0 9 * * 1"`)},
	}, {
		name:   "the example has nothing at the path",
		status: 400,
		body: `{"error":{"code":"invalid_customer","field":"customer","example_request":{"method":"POST",
			"body":{"amount":2500}}}}`,
		args: `{"customer":"Ada"}`,
	}, {
		name:   "the example holds the value already sent",
		status: 400,
		body: `{"error":{"code":"invalid_customer","field":"customer","example_request":{"body":{"customer":"Ada"},
			"method":"POST"}}}`,
		args: `{"customer":"Ada"}`,
	}})
}

func TestDefaultRewriterAdditionalProperties(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "pydantic extra_forbidden names the property",
		status: 422,
		body: `{"detail":[{"type":"extra_forbidden","loc":["body","nickname"],"msg":"Extra inputs are not permitted",
			"input":"Ada"}]}`,
		args:    `{"name":"Ada Lovelace","nickname":"Ada"}`,
		want:    `{"name":"Ada Lovelace"}`,
		changes: []changeView{lossy("/nickname", "drop_unknown", `"Ada"`, ``)},
	}, {
		name:   "Stripe parameter_unknown, bracketed param",
		status: 400,
		body: `{"error":{"type":"invalid_request_error","code":"parameter_unknown",
			"message":"Received unknown parameter: card[colour]","param":"card[colour]",
			"doc_url":"https://stripe.com/docs/error-codes/parameter-unknown"}}`,
		args:    `{"amount":100,"card":{"number":"4242","colour":"blue"}}`,
		want:    `{"amount":100,"card":{"number":"4242"}}`,
		changes: []changeView{lossy("/card/colour", "drop_unknown", `"blue"`, ``)},
	}, {
		name:   "OpenAI unknown_parameter quotes the property it names",
		status: 400,
		body: `{"error":{"message":"Unknown parameter: 'temprature'.","type":"invalid_request_error",
			"param":"temprature","code":"unknown_parameter"}}`,
		args:    `{"model":"gpt-4o","temprature":0.2}`,
		want:    `{"model":"gpt-4o"}`,
		changes: []changeView{lossy("/temprature", "drop_unknown", `0.2`, ``)},
	}, {
		name:   "zod unrecognized_keys names the keys of the object at the path",
		status: 400,
		body: `{"error":{"statusCode":400,"code":"invalid_body","message":"Invalid request body","issues":[
			{"path":["shipping"],"code":"unrecognized_keys","message":"Unrecognized key(s) in object: 'zip', 'county'"}]}}`,
		args:    `{"shipping":{"postal_code":"75001","zip":"75001","county":"Paris"},"zip":"keep"}`,
		want:    `{"shipping":{"postal_code":"75001"},"zip":"keep"}`,
		changes: []changeView{lossy("/shipping/zip", "drop_unknown", `"75001"`, ``), lossy("/shipping/county", "drop_unknown", `"Paris"`, ``)},
	}, {
		name:   "zod v4 unrecognized keys at the root",
		status: 400,
		body: `{"error":{"statusCode":400,"code":"invalid_body","issues":[
			{"path":[],"code":"unrecognized_keys","message":"Unrecognized key: \"verbose\""}]}}`,
		args:    `{"query":"x","verbose":true}`,
		want:    `{"query":"x"}`,
		changes: []changeView{lossy("/verbose", "drop_unknown", `true`, ``)},
	}, {
		name:   "JSON Schema additionalProperties, camel case, RFC 9457 errors with pointers",
		status: 422,
		body: `{"type":"https://example.net/validation-error","title":"Your request is not valid.","status":422,
			"errors":[{"detail":"must NOT have additional properties","pointer":"#/profile/colour","code":"additionalProperties"}]}`,
		args:    `{"profile":{"color":"red","colour":"red"}}`,
		want:    `{"profile":{"color":"red"}}`,
		changes: []changeView{lossy("/profile/colour", "drop_unknown", `"red"`, ``)},
	}, {
		name:   "a numeric key is a property, not an index",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["labels","2024"],
			"code":"unknown_field"}]}}`,
		args:    `{"labels":{"2024":"x","env":"prod"}}`,
		want:    `{"labels":{"env":"prod"}}`,
		changes: []changeView{lossy("/labels/2024", "drop_unknown", `"x"`, ``)},
	}, {
		name:   "the property is not in the arguments",
		status: 422,
		body:   `{"detail":[{"type":"extra_forbidden","loc":["body","nickname"],"msg":"Extra inputs are not permitted"}]}`,
		args:   `{"name":"Ada"}`,
	}, {
		name:   "the schema declares the property: the path is its parent",
		status: 400,
		body: `{"error":{"statusCode":400,"code":"invalid_body","issues":[{"path":["shipping"],"code":"unrecognized_keys",
			"message":"Unrecognized keys in object"}],"schema":{"type":"object","properties":{"shipping":{"type":"object"}}}}}`,
		args: `{"shipping":{"zip":"75001"}}`,
	}, {
		name:   "an array element is not a property",
		status: 422,
		body:   `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["tags",1],"code":"additional_properties"}]}}`,
		args:   `{"tags":["a","b"]}`,
	}, {
		name:   "the whole document",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":[],"code":"additional_properties",
			"message":"must NOT have additional properties"}]}}`,
		args: `{"a":1}`,
	}})
}

func TestDefaultRewriterRequiredDefault(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "default in the issue's expected schema",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["currency"],"code":"required",
			"message":"currency is required","expected":{"type":"string","default":"usd"}}]}}`,
		args:    `{"amount":100}`,
		want:    `{"amount":100,"currency":"usd"}`,
		changes: []changeView{lossless("/currency", "default", ``, `"usd"`)},
	}, {
		name:   "default in the envelope's object schema",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["options","page_size"],"code":"missing_field"}],
			"schema":{"type":"object","properties":{"options":{"type":"object","properties":{
				"page_size":{"type":"integer","default":20}}}}}}}`,
		args:    `{"query":"x"}`,
		want:    `{"query":"x","options":{"page_size":20}}`,
		changes: []changeView{lossless("/options/page_size", "default", ``, `20`)},
	}, {
		name:   "the schema is the array item's, rooted along the path",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["items",1,"unit"],"code":"Required"}],
			"schema":{"type":"object","properties":{"sku":{"type":"string"},"unit":{"type":"string","default":"each"}}}}}`,
		args:    `{"items":[{"sku":"A-1","unit":"box"},{"sku":"B-2"}]}`,
		want:    `{"items":[{"sku":"A-1","unit":"box"},{"sku":"B-2","unit":"each"}]}`,
		changes: []changeView{lossless("/items/1/unit", "default", ``, `"each"`)},
	}, {
		name:   "a leaf schema belongs to the single issue",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["limit"],"code":"missing"}],
			"schema":{"type":"integer","minimum":1,"default":50}}}`,
		args:    `{}`,
		want:    `{"limit":50}`,
		changes: []changeView{lossless("/limit", "default", ``, `50`)},
	}, {
		name:   "a required field sent as null",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["limit"],"code":"value_required",
			"expected":{"default":50}}]}}`,
		args:    `{"limit":null}`,
		want:    `{"limit":50}`,
		changes: []changeView{lossless("/limit", "default", `null`, `50`)},
	}, {
		name:   "the path names the object and the message the field",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["customer"],"code":"required",
			"message":"must have required property 'locale'"}],
			"schema":{"type":"object","properties":{"customer":{"type":"object","properties":{"locale":{"type":"string","default":"en"}}}}}}}`,
		args:    `{"customer":{"name":"Ada"}}`,
		want:    `{"customer":{"name":"Ada","locale":"en"}}`,
		changes: []changeView{lossless("/customer/locale", "default", ``, `"en"`)},
	}, {
		name:   "no default: GitHub missing_field",
		status: 422,
		body: `{"message":"Validation Failed","errors":[{"resource":"Issue","code":"missing_field","field":"title"}],
			"documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue"}`,
		args: `{"body":"text"}`,
	}, {
		name:   "a leaf schema is not given to one of several issues",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["limit"],"code":"missing"},
			{"path":["currency"],"code":"enum","allowed_values":["usd"]}],"schema":{"type":"integer","default":50}}}`,
		args: `{"currency":"eur"}`,
	}, {
		name:   "the field is present: not missing",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["limit"],"code":"required",
			"expected":{"default":50}}]}}`,
		args: `{"limit":"abc"}`,
	}})
}

func TestDefaultRewriterClamp(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "RFC 9457 invalid_fields minimum",
		status: 400,
		body: `{"type":"https://api.example.com/problems/invalid-request-body","title":"Request body failed validation",
			"status":400,"invalid_fields":[{"field":"items[0].quantity","reason":"must be greater than or equal to 1",
			"expected":{"type":"integer","minimum":1},"received":0}]}`,
		args:    `{"items":[{"quantity":0,"sku":"A-1"}]}`,
		want:    `{"items":[{"quantity":1,"sku":"A-1"}]}`,
		changes: []changeView{lossy("/items/0/quantity", "clamp", `0`, `1`)},
	}, {
		name:   "maximum without a suggestion",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["items",2,"quantity"],"code":"maximum",
			"message":"quantity must be at most 100","expected":{"maximum":100},"received":250}]}}`,
		args:    `{"items":[{},{},{"quantity":250}]}`,
		want:    `{"items":[{},{},{"quantity":100}]}`,
		changes: []changeView{lossy("/items/2/quantity", "clamp", `250`, `100`)},
	}, {
		name:   "exclusive minimum of an integer",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["count"],"code":"exclusiveMinimum",
			"expected":{"type":"integer","exclusiveMinimum":0}}]}}`,
		args:    `{"count":-3}`,
		want:    `{"count":1}`,
		changes: []changeView{lossy("/count", "clamp", `-3`, `1`)},
	}, {
		name:   "exclusive maximum from the envelope's schema",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["retries"],"code":"exclusive_maximum"}],
			"schema":{"type":"object","properties":{"retries":{"type":"integer","exclusiveMaximum":10}}}}}`,
		args:    `{"retries":12}`,
		want:    `{"retries":9}`,
		changes: []changeView{lossy("/retries", "clamp", `12`, `9`)},
	}, {
		name:   "draft 4 exclusive minimum",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["n"],"code":"minimum",
			"expected":{"type":"integer","minimum":5,"exclusiveMinimum":true}}]}}`,
		args:    `{"n":2}`,
		want:    `{"n":6}`,
		changes: []changeView{lossy("/n", "clamp", `2`, `6`)},
	}, {
		name:   "integer bound rounded inward",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["n"],"code":"minimum",
			"expected":{"type":"integer","minimum":2.5}}]}}`,
		args:    `{"n":1}`,
		want:    `{"n":3}`,
		changes: []changeView{lossy("/n", "clamp", `1`, `3`)},
	}, {
		name:   "number minimum kept as written",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["temperature"],"code":"minimum",
			"expected":{"type":"number","minimum":0.5}}]}}`,
		args:    `{"temperature":0.1}`,
		want:    `{"temperature":0.5}`,
		changes: []changeView{lossy("/temperature", "clamp", `0.1`, `0.5`)},
	}, {
		name:   "maxLength cuts by characters",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["title"],"code":"too_long",
			"expected":{"type":"string","maxLength":5}}]}}`,
		args:    `{"title":"héllo wörld"}`,
		want:    `{"title":"héllo"}`,
		changes: []changeView{lossy("/title", "truncate", `"héllo wörld"`, `"héllo"`)},
	}, {
		name:   "exclusive bound of a number has no nearest value",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["ratio"],"code":"exclusiveMinimum",
			"expected":{"type":"number","exclusiveMinimum":0}}]}}`,
		args: `{"ratio":0}`,
	}, {
		name:   "minLength cannot be repaired",
		status: 400,
		body: `{"error":{"statusCode":400,"code":"invalid_body","issues":[{"path":["shipping","address","postal_code"],
			"code":"too_small","message":"String must contain at least 5 character(s)","expected":{"minLength":5}}]}}`,
		args: `{"shipping":{"address":{"postal_code":"750"}}}`,
	}, {
		name:   "the value is in range: something else is wrong",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["n"],"code":"multipleOf",
			"expected":{"minimum":1,"maximum":10,"multipleOf":3}}]}}`,
		args: `{"n":4}`,
	}, {
		name:   "contradictory bounds",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["n"],"code":"range",
			"expected":{"minimum":10,"maximum":1}}]}}`,
		args: `{"n":20}`,
	}})
}

func TestDefaultRewriterCoerce(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "a string of digits to an integer, bare type name",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["quantity"],"code":"invalid_type",
			"message":"Expected integer, received string","expected":"integer","received":"5"}]}}`,
		args:    `{"quantity":"5"}`,
		want:    `{"quantity":5}`,
		changes: []changeView{lossless("/quantity", "coerce", `"5"`, `5`)},
	}, {
		name:   "a numeric string to a number, type from the item schema",
		status: 400,
		body: `{"error":{"statusCode":400,"code":"invalid_body","issues":[{"path":["items",1,"price"],"code":"invalid_type",
			"message":"Expected number, received string"}],
			"schema":{"type":"object","properties":{"price":{"type":"number"}}}}}`,
		args:    `{"items":[{"price":1},{"price":"-12.50"}]}`,
		want:    `{"items":[{"price":1},{"price":-12.50}]}`,
		changes: []changeView{lossless("/items/1/price", "coerce", `"-12.50"`, `-12.50`)},
	}, {
		name:   "a boolean string",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["notify"],"code":"invalid_type",
			"expected":{"type":"boolean"}}]}}`,
		args:    `{"notify":"false"}`,
		want:    `{"notify":false}`,
		changes: []changeView{lossless("/notify", "coerce", `"false"`, `false`)},
	}, {
		name:   "a number to a string",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["zip"],"code":"invalid_type",
			"expected":"string","received":75001}]}}`,
		args:    `{"zip":75001}`,
		want:    `{"zip":"75001"}`,
		changes: []changeView{lossless("/zip", "coerce", `75001`, `"75001"`)},
	}, {
		name:   "a nullable integer type",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["limit"],"code":"type",
			"expected":{"type":["integer","null"]}}]}}`,
		args:    `{"limit":"20"}`,
		want:    `{"limit":20}`,
		changes: []changeView{lossless("/limit", "coerce", `"20"`, `20`)},
	}, {
		name:   "an integral float to an integer",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["limit"],"code":"type",
			"expected":"int"}]}}`,
		args:    `{"limit":20.0}`,
		want:    `{"limit":20}`,
		changes: []changeView{lossless("/limit", "coerce", `20.0`, `20`)},
	}, {
		name:   "a fraction is not an integer",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["quantity"],"code":"invalid_type",
			"expected":"integer"}]}}`,
		args: `{"quantity":"5.5"}`,
	}, {
		name:   "only exact numbers parse",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["quantity"],"code":"invalid_type",
			"expected":"number"}]}}`,
		args: `{"quantity":" 5"}`,
	}, {
		name:   "only exact booleans parse",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["notify"],"code":"invalid_type",
			"expected":"boolean"}]}}`,
		args: `{"notify":"yes"}`,
	}, {
		name:   "no type to aim at: OpenAI invalid_type",
		status: 400,
		body: `{"error":{"message":"Invalid type for 'messages[1].content': expected one of a string or array of objects, but got an integer instead.",
			"type":"invalid_request_error","param":"messages[1].content","code":"invalid_type"}}`,
		args: `{"messages":[{"role":"system","content":"x"},{"role":"user","content":42}]}`,
	}})
}

func TestDefaultRewriterGivesUp(t *testing.T) {
	runRewriteCases(t, []rewriteCase{{
		name:   "one issue of three has no repair",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","message":"3 issues","issues":[
			{"path":["customer_id"],"code":"required","message":"customer_id is required","expected":{"type":"string","pattern":"^cus_[A-Za-z0-9]{14}$"}},
			{"path":["currency"],"code":"enum","received":"USD$","allowed_values":["usd","eur","gbp"],"suggested_value":"usd"},
			{"path":["items",2,"quantity"],"code":"maximum","expected":{"maximum":100},"received":250,"suggested_value":100}]}}`,
		args: `{"currency":"USD$","items":[{},{},{"quantity":250}]}`,
	}, {
		name:   "no issues: a rate limit",
		status: 429,
		body:   `{"error":{"type":"rate_limit_error","message":"Too many requests"},"type":"error"}`,
		args:   `{"a":1}`,
	}, {
		name:   "no issues: a state conflict",
		status: 409,
		body: `{"type":"https://example.com/probs/invalid-state","status":409,"detail":"Invoice in_1 is a draft.",
			"next_operation":"finalize_invoice","next_operation_args":{"id":"in_1"}}`,
		args: `{"id":"in_1"}`,
	}, {
		name:   "the suggestion is what was sent",
		status: 400,
		body:   `{"error":{"code":"invalid_currency","field":"currency","suggested_value":"usd"}}`,
		args:   `{"currency":"usd"}`,
	}, {
		name:   "an index past the end of the array",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["items",5,"quantity"],"code":"maximum",
			"suggested_value":100}]}}`,
		args: `{"items":[{"quantity":250}]}`,
	}, {
		name:   "a path through a string",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["shipping","country"],"code":"enum",
			"allowed_values":["FR"]}]}}`,
		args: `{"shipping":"Paris"}`,
	}, {
		name:   "the whole document with no rule",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":[],"code":"type",
			"message":"must be object","expected":"object"}]}}`,
		args: `{"a":1}`,
	}, {
		name:   "a suggestion for the whole document that is not an object",
		status: 422,
		body: `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":[],"code":"type",
			"suggested_value":[1]}]}}`,
		args: `{"a":1}`,
	}, {
		name:   "arguments that are an array",
		status: 422,
		body:   `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["0"],"code":"enum","allowed_values":["x"]}]}}`,
		args:   `["y"]`,
	}, {
		name:   "arguments that are not JSON",
		status: 422,
		body:   `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["a"],"code":"enum","allowed_values":["x"]}]}}`,
		args:   `{"a":`,
	}, {
		name:   "arguments with a key twice",
		status: 422,
		body:   `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["a"],"code":"enum","allowed_values":["x"]}]}}`,
		args:   `{"a":"y","a":"z"}`,
	}, {
		name:   "no arguments",
		status: 422,
		body:   `{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["a"],"code":"enum","allowed_values":["x"]}]}}`,
		args:   ``,
	}})

	// A failure listing hundreds of issues rejects the request as a whole; repairing it would
	// cost issues times arguments.
	var many strings.Builder
	many.WriteString(`{"error":{"statusCode":422,"code":"invalid_body","issues":[`)
	for i := range 257 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `{"path":["f%d"],"code":"enum","suggested_value":"v"}`, i)
	}
	many.WriteString(`]}}`)
	manyIssues, _ := remedy.Parse(422, nil, []byte(many.String()))
	require.Len(t, manyIssues.Issues, 257)

	ctx := context.Background()
	for name, r := range map[string]*rewrite.Request{
		"more than 256 issues": {Args: json.RawMessage(`{"f0":"x"}`), Envelope: manyIssues},
		"nil rewrite":          nil,
		"nil envelope":         {Args: json.RawMessage(`{"a":1}`)},
		"hand-built envelope with invalid JSON values": {Args: json.RawMessage(`{"a":1}`), Envelope: &remedy.Envelope{
			Issues: []remedy.Issue{{Path: "/a", SuggestedValue: json.RawMessage(`{`), AllowedValues: []json.RawMessage{[]byte(`nope`)},
				Expected: json.RawMessage(`{"default":`)}},
			Schema: json.RawMessage(`[`), ExampleRequest: json.RawMessage(`{"a":`),
		}},
		"hand-built envelope with an invalid pointer": {Args: json.RawMessage(`{"a":1}`), Envelope: &remedy.Envelope{
			Issues: []remedy.Issue{{Path: "a~9", SuggestedValue: json.RawMessage(`2`)}},
		}},
	} {
		out, err := rewrite.Default.Rewrite(ctx, r)
		assert.NoError(t, err, name)
		assert.Nil(t, out, name)
	}
}

// argsReaching builds arguments that hold a value at each pointer, so that the rewriter's rules
// find something to work on: objects for keys, arrays long enough for indexes.
func argsReaching(pointers []string, leaf any) []byte {
	root := map[string]any{}
	for _, p := range pointers {
		if p == "" || p[0] != '/' {
			continue
		}
		segs := strings.Split(p[1:], "/")
		var cur any = root
		for i, s := range segs {
			s = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
			last := i == len(segs)-1
			var next any = map[string]any{}
			if last {
				next = leaf
			}
			switch c := cur.(type) {
			case map[string]any:
				if existing, ok := c[s]; ok && !last {
					next = existing
				} else {
					c[s] = next
				}
			default:
				next = nil
			}
			if next == nil {
				break
			}
			cur = next
		}
	}
	out, _ := json.Marshal(root)
	return out
}

// TestDefaultRewriterCorpus runs the rewriter over every envelope of the corpus, nested ones too,
// with arguments of several shapes: it must never panic, and what it returns must be a JSON
// object that differs from the arguments.
func TestDefaultRewriterCorpus(t *testing.T) {
	ctx := context.Background()
	for _, s := range loadCorpus(t) {
		e, ok := remedy.Parse(s.Status, s.Header, s.Body)
		if !ok {
			continue
		}
		envs := []*remedy.Envelope{e}
		for i := range e.Errors {
			envs = append(envs, &e.Errors[i])
		}
		for _, env := range envs {
			var pointers []string
			for _, is := range env.Issues {
				pointers = append(pointers, is.Path)
			}
			argSets := [][]byte{
				[]byte(`{}`),
				[]byte(`{"a":1,"items":[{"quantity":250,"sku":"abc"}],"currency":"USD$"}`),
				[]byte(`{"nested":{"deep":[[{"x":"5"}]]},"flag":"true","n":-1e308}`),
				argsReaching(pointers, "5"),
				argsReaching(pointers, 1e9),
				argsReaching(pointers, map[string]any{"extra": true}),
				argsReaching(pointers, nil),
			}
			for _, args := range argSets {
				r := &rewrite.Request{Operation: "op", Args: args, Envelope: env, Attempt: 1}
				var out json.RawMessage
				require.NotPanics(t, func() {
					var err error
					out, err = rewrite.Default.Rewrite(ctx, r)
					require.NoError(t, err)
				}, "%s/%s args %s", s.Dialect, s.Name, args)
				if out == nil {
					continue
				}
				assert.True(t, json.Valid(out) && out[0] == '{', "%s/%s: %s", s.Dialect, s.Name, out)
				if err := checkChanges(args, out, r.Changes); err != nil {
					t.Errorf("%s/%s: %v", s.Dialect, s.Name, err)
				}
				assert.NotEqual(t, string(args), string(out), "%s/%s", s.Dialect, s.Name)
				again, _ := rewrite.Default.Rewrite(ctx, r)
				assert.Equal(t, string(out), string(again), "deterministic: %s/%s", s.Dialect, s.Name)
			}
		}
	}
}

// FuzzDefaultRewriter feeds any body and any arguments through Parse and the rewriter.
func FuzzDefaultRewriter(f *testing.F) {
	f.Add([]byte(`{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["items",0,"q"],"code":"maximum","expected":{"maximum":3}}]}}`),
		[]byte(`{"items":[{"q":9}]}`), []byte(nil))
	f.Add([]byte(`{"error":{"code":"x","field":"a.b","suggested_value":{"c":[1]},"example_request":{"a":{"b":2}}}}`),
		[]byte(`{"a":{"b":"x"}}`), []byte(nil))
	f.Add([]byte(`{"detail":[{"type":"extra_forbidden","loc":["body","a~b","0"],"msg":"Extra 'x'"}]}`),
		[]byte(`{"a~b":{"0":{"x":1}}}`), []byte(nil))
	f.Add([]byte(`{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":["s"],"code":"required","message":"'t'"}],"schema":{"type":"object","properties":{"s":{"properties":{"t":{"default":1}}}}}}}`),
		[]byte(`{"s":{}}`), []byte(nil))
	// The operation's schema: a Go validator's field without a path, a decoder's path without
	// its index, gin's bare rule, an ASP.NET path in another case.
	f.Add([]byte(`{"error":"Key: 'CreateItem.Lines[1].Qty' Error:Field validation for 'Qty' failed on the 'max' tag\nKey: 'CreateItem.Currency' Error:Field validation for 'Currency' failed on the 'oneof' tag"}`),
		[]byte(`{"currency":"USD","lines":[{"qty":1},{"qty":50}]}`), []byte(itemSchema))
	f.Add([]byte(`{"error":"json: cannot unmarshal string into Go struct field Line.lines.qty of type int"}`),
		[]byte(`{"lines":[{"qty":1},{"qty":"2"}]}`), []byte(itemSchema))
	f.Add([]byte(`{"errors":{"Quantity":["The value '5x' is not valid."]},"title":"One or more validation errors occurred.","status":400}`),
		[]byte(`{"quantity":"5"}`), []byte(`{"$ref":"#/$defs/I","$defs":{"I":{"type":"object","properties":{"quantity":{"type":"integer","maximum":3}}}}}`))
	f.Fuzz(func(t *testing.T, body, args, schema []byte) {
		e, ok := remedy.Parse(422, nil, body)
		if !ok {
			return
		}
		r := &rewrite.Request{Args: args, Envelope: e, Schema: schema}
		out, err := rewrite.Default.Rewrite(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if out != nil && (!json.Valid(out) || out[0] != '{') {
			t.Fatalf("not a JSON object: %s", out)
		}
		if (out == nil) != (len(r.Blocked) > 0) {
			t.Fatalf("repair %s with blocked %+v: a give-up says why, and a repair is blocked by nothing", out, r.Blocked)
		}
		if err := checkChanges(args, out, r.Changes); err != nil {
			t.Fatalf("%v\nargs %s\nout  %s\nissues %+v", err, args, out, e.Issues)
		}
	})
}

func TestLLMRewriter(t *testing.T) {
	body := []byte(`{"error":{"statusCode":422,"code":"invalid_body","message":"The request body failed validation.",
		"issues":[{"path":["currency"],"code":"enum","allowed_values":["usd","eur"],"received":"US$"}]}}`)
	e, ok := remedy.Parse(422, nil, body)
	require.True(t, ok)
	args := json.RawMessage(`{"amount": 2500, "currency": "US$"}`)
	huge := `{"a":"` + strings.Repeat("x", 1<<20) + `"}`

	tests := []struct {
		name    string
		reply   string
		err     error
		want    string // "" when the rewriter gives up
		wantErr error
	}{
		{name: "bare object", reply: `{"amount":2500,"currency":"usd"}`, want: `{"amount":2500,"currency":"usd"}`},
		{name: "surrounding space", reply: "\n  {\"amount\": 2500, \"currency\": \"eur\"}\n\n", want: `{"amount":2500,"currency":"eur"}`},
		{name: "json fence", reply: "```json\n{\"amount\":2500,\"currency\":\"usd\"}\n```", want: `{"amount":2500,"currency":"usd"}`},
		{name: "plain fence", reply: "```\n{\"amount\":2500,\"currency\":\"usd\"}\n```\n", want: `{"amount":2500,"currency":"usd"}`},
		{name: "empty", reply: "  \n"},
		{name: "null", reply: "null"},
		{name: "fenced null", reply: "```json\nnull\n```"},
		{name: "unchanged arguments", reply: `{"amount":2500,"currency":"US$"}`},
		{name: "prose", reply: `Sure! Here are the corrected arguments: {"amount":2500,"currency":"usd"}`, wantErr: rewrite.ErrReply},
		{name: "prose after the fence", reply: "```json\n{\"currency\":\"usd\"}\n```\nI changed the currency.", wantErr: rewrite.ErrReply},
		{name: "two fences", reply: "```json\n{\"currency\":\"usd\"}\n```\n```json\n{}\n```", wantErr: rewrite.ErrReply},
		{name: "another language", reply: "```python\n{\"currency\":\"usd\"}\n```", wantErr: rewrite.ErrReply},
		{name: "array", reply: `[{"amount":2500,"currency":"usd"}]`, wantErr: rewrite.ErrReply},
		{name: "string", reply: `"usd"`, wantErr: rewrite.ErrReply},
		{name: "invalid JSON", reply: `{"amount":2500,`, wantErr: rewrite.ErrReply},
		{name: "duplicate keys", reply: `{"currency":"usd","currency":"eur"}`, wantErr: rewrite.ErrReply},
		{name: "huge", reply: huge, wantErr: rewrite.ErrReply},
		{name: "completion error", err: context.DeadlineExceeded, wantErr: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var prompt string
			rw := rewrite.LLM(func(_ context.Context, p string) (string, error) {
				prompt = p
				return tt.reply, tt.err
			})
			out, err := rw.Rewrite(context.Background(), &rewrite.Request{Operation: "create_payment", Args: args, Envelope: e, Attempt: 1})
			assert.True(t, strings.HasPrefix(prompt, e.Prompt()), "prompt starts with the envelope's:\n%s", prompt)
			assert.Contains(t, prompt, "create_payment")
			assert.Contains(t, prompt, `{"amount":2500,"currency":"US$"}`)
			assert.Contains(t, prompt, "one JSON object and nothing else")
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, out)
				return
			}
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, out)
				return
			}
			assert.JSONEq(t, tt.want, string(out))
		})
	}
}

func TestLLMRewriterDoesNotCallTheModel(t *testing.T) {
	e, _ := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_currency","field":"currency"}}`))
	calls := 0
	rw := rewrite.LLM(func(context.Context, string) (string, error) {
		calls++
		return `{"currency":"usd"}`, nil
	})
	for name, r := range map[string]*rewrite.Request{
		"nil rewrite":       nil,
		"nil envelope":      {Args: json.RawMessage(`{"currency":"US$"}`)},
		"array arguments":   {Args: json.RawMessage(`["US$"]`), Envelope: e},
		"invalid JSON":      {Args: json.RawMessage(`{"currency":`), Envelope: e},
		"no arguments":      {Envelope: e},
		"a key given twice": {Args: json.RawMessage(`{"currency":"a","currency":"b"}`), Envelope: e},
	} {
		out, err := rw.Rewrite(context.Background(), r)
		assert.NoError(t, err, name)
		assert.Nil(t, out, name)
	}
	assert.Zero(t, calls)

	out, err := rewrite.LLM(nil).Rewrite(context.Background(), &rewrite.Request{Args: json.RawMessage(`{}`), Envelope: e})
	assert.Error(t, err)
	assert.Nil(t, out)
}

func TestLLMRewriterErrorWrapped(t *testing.T) {
	e, _ := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_currency","field":"currency"}}`))
	boom := errors.New("upstream 503")
	_, err := rewrite.LLM(func(context.Context, string) (string, error) { return "", boom }).
		Rewrite(context.Background(), &rewrite.Request{Args: json.RawMessage(`{"currency":"x"}`), Envelope: e})
	require.ErrorIs(t, err, boom)
	assert.NotEqual(t, boom.Error(), err.Error(), "wrapped with context")

	_, err = rewrite.LLM(func(context.Context, string) (string, error) { return "I cannot help with that.", nil }).
		Rewrite(context.Background(), &rewrite.Request{Args: json.RawMessage(`{"currency":"x"}`), Envelope: e})
	require.ErrorIs(t, err, rewrite.ErrReply)
	assert.Contains(t, err.Error(), "I cannot help")
}

// The deterministic rewriter goes first; the model is asked only when it gives up.
func TestChainDefaultThenLLM(t *testing.T) {
	calls := 0
	llm := rewrite.LLM(func(context.Context, string) (string, error) {
		calls++
		return `{"sort":"asc"}`, nil
	})
	rw := rewrite.Chain(rewrite.Default, llm)

	single, _ := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_sort","field":"sort","allowed_values":["asc"]}}`))
	out, err := rw.Rewrite(context.Background(), &rewrite.Request{Args: json.RawMessage(`{"sort":"up"}`), Envelope: single})
	require.NoError(t, err)
	assert.JSONEq(t, `{"sort":"asc"}`, string(out))
	assert.Zero(t, calls)

	// No value and no schema: the deterministic rewriter has nothing to go on.
	vague, _ := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_sort","field":"sort","message":"unknown sort order"}}`))
	out, err = rw.Rewrite(context.Background(), &rewrite.Request{Args: json.RawMessage(`{"sort":"up"}`), Envelope: vague})
	require.NoError(t, err)
	assert.JSONEq(t, `{"sort":"asc"}`, string(out))
	assert.Equal(t, 1, calls)

	// Several allowed values: the deterministic rewriter can only propose a choice, so the
	// model is asked first; its repair goes, with no lossy change left over from the proposal.
	several, _ := remedy.Parse(400, nil, []byte(`{"error":{"code":"invalid_sort","field":"sort","allowed_values":["desc","asc"]}}`))
	r := &rewrite.Request{Args: json.RawMessage(`{"sort":"up"}`), Envelope: several}
	out, err = rw.Rewrite(context.Background(), r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sort":"asc"}`, string(out))
	assert.Equal(t, 2, calls)
	assert.Empty(t, r.Changes, "the model's repair is described by the loop, not by the proposal it replaced")

	// A model that gives up leaves the proposal, with its changes.
	quiet := rewrite.Chain(rewrite.Default, rewrite.LLM(func(context.Context, string) (string, error) { return "null", nil }))
	r = &rewrite.Request{Args: json.RawMessage(`{"sort":"up"}`), Envelope: several}
	out, err = quiet.Rewrite(context.Background(), r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sort":"desc"}`, string(out))
	require.Len(t, r.Changes, 1)
	assert.True(t, r.Changes[0].Lossy)
	assert.Equal(t, "choose_allowed", r.Changes[0].Rule)
}

// A server that suggests the bound it enforces suggests another amount: the repair is a
// proposal, however lossless a server's suggestion otherwise is. A suggestion of the same
// number in another form is not.
func TestDefaultRewriterSuggestedNumberIsLossy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args, body string
		lossy      bool
	}{
		{`{"amount":99999999}`, `{"error":{"code":"invalid_body","message":"m","issues":[{"path":["amount"],"code":"maximum","expected":{"maximum":1000000},"suggested_value":1000000}]}}`, true},
		{`{"amount":10}`, `{"error":{"code":"invalid_body","message":"m","field":"amount","suggested_value":50}}`, true},
		{`{"amount":5.0}`, `{"error":{"code":"invalid_body","message":"m","issues":[{"path":["amount"],"code":"type","expected":"integer","suggested_value":5}]}}`, false},
		{`{"amount":"1200"}`, `{"error":{"code":"invalid_body","message":"m","issues":[{"path":["amount"],"code":"type","suggested_value":1200}]}}`, false},
		{`{"currency":"usd"}`, `{"error":{"code":"invalid_body","message":"m","issues":[{"path":["currency"],"code":"enum","suggested_value":"eur"}]}}`, false},
	} {
		e, ok := remedy.Parse(422, nil, []byte(tc.body))
		if !ok {
			t.Fatal("not a failure")
		}
		r := &rewrite.Request{Operation: "charge", Args: json.RawMessage(tc.args), Envelope: e}
		out, err := rewrite.Default.Rewrite(context.Background(), r)
		if err != nil || out == nil || len(r.Changes) != 1 {
			t.Fatalf("%s: no repair: %s %v %v", tc.args, out, err, r.Changes)
		}
		if c := r.Changes[0]; c.Rule != "suggested_value" || c.Lossy != tc.lossy {
			t.Errorf("%s: change %+v, want suggested_value with lossy %v", tc.args, c, tc.lossy)
		}
	}
}

// TestDefaultRewriterLeavesPathlessIssues: a framework's failure whose issues name no field
// (a Go validator's namespace of Go field names, encoding/json's path through an array, a
// template two decorators share) is not repaired: with no path, any edit would be a guess.
// Every such failure recorded from the frameworks is tried against arguments that hold the
// fields they talk about.
func TestDefaultRewriterLeavesPathlessIssues(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"name":"desk","sku":"D-1","color":"purple","quantity":"two","currency":"gbp","lines":[{"sku":"A","quantity":1},{"quantity":"x"}]}`)
	tried := 0
	for _, s := range loadCorpus(t) {
		e, ok := remedy.Parse(s.Status, s.Header, s.Body)
		if !ok || len(e.Issues) == 0 {
			continue
		}
		pathless := true
		for _, is := range e.Issues {
			pathless = pathless && is.Path == "" && len(is.AllowedValues) == 0 && len(is.SuggestedValue) == 0
		}
		if !pathless {
			continue
		}
		tried++
		r := &rewrite.Request{Operation: "create_item", Args: args, Envelope: e, Attempt: 1}
		out, err := rewrite.Default.Rewrite(context.Background(), r)
		require.NoError(t, err)
		assert.Nil(t, out, "%s/%s was repaired without a path: %s", s.Dialect, s.Name, out)
		assert.Empty(t, r.Changes, "%s/%s", s.Dialect, s.Name)
		assert.False(t, e.Retryable && e.Category == remedy.CategoryValidation, "%s/%s: a validation failure is not sent again unchanged", s.Dialect, s.Name)
	}
	require.GreaterOrEqual(t, tried, 10, "the corpus holds the frameworks' path-less failures")
}
