package server

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
)

// xpRow and xpOrder are the benchmark's order: a pattern, a format, an enum, bounds.
type xpRow struct {
	SKU      string  `json:"sku" schema:"minLength=1;maxLength=32"`
	Quantity int     `json:"quantity" schema:"minimum=1;maximum=100"`
	Price    float64 `json:"price" schema:"minimum=0"`
}

type xpOrder struct {
	CustomerID string  `json:"customer_id" schema:"pattern=^cus_[a-z0-9]+$"`
	Email      string  `json:"email" schema:"format=email"`
	Currency   string  `json:"currency" schema:"enum=usd,eur,gbp"`
	Items      []xpRow `json:"items" schema:"minItems=1;maxItems=50"`
	Note       string  `json:"note,omitempty" schema:"maxLength=200"`
	Gift       bool    `json:"gift,omitempty"`
}

// xpTree nests objects, maps and arrays.
type xpTree struct {
	Name     string            `json:"name" schema:"minLength=2"`
	Children []*xpKid          `json:"children,omitempty" schema:"maxItems=3"`
	Labels   map[string]int    `json:"labels,omitempty"`
	Meta     map[string]any    `json:"meta,omitempty"`
	Matrix   [][]int           `json:"matrix,omitempty" schema:"maxItems=2"`
	Flags    []string          `json:"flags,omitempty" schema:"uniqueItems;minItems=1"`
	Extra    map[string]string `json:"extra,omitempty"`
}

type xpKid struct {
	Name   string         `json:"name" schema:"minLength=2"`
	Labels map[string]int `json:"labels,omitempty"`
	Kids   []xpKid2       `json:"children,omitempty"`
}

type xpKid2 struct {
	Name string `json:"name" schema:"minLength=2"`
}

// xpSchemas are the schemas the explanation is held to the full path on: from Go types, as
// operations have them, and written by hand for the keywords Go types do not produce ($ref
// beside other keywords, boolean schemas, const, additionalProperties as a schema, integers
// written as numbers).
func xpSchemas(t testing.TB) map[string]*validator {
	t.Helper()
	out := map[string]*validator{}
	for name, typ := range map[string]reflect.Type{
		"vtOrder": reflect.TypeFor[vtOrder](),
		"xpOrder": reflect.TypeFor[xpOrder](),
		"xpTree":  reflect.TypeFor[xpTree](),
	} {
		s, _, err := inputSchema(typ)
		require.NoError(t, err)
		v, err := newValidator(s)
		require.NoError(t, err)
		require.NotNil(t, v.fast, name)
		out[name] = v
	}
	for name, raw := range map[string]string{
		"refs": `{"type":"object","$defs":{"code":{"type":"string","pattern":"^[A-Z]{3}$","minLength":3},` +
			`"pos":{"type":"integer","exclusiveMinimum":0},"never":false,"always":true},` +
			`"properties":{"a":{"$ref":"#/$defs/code","maxLength":3,"pattern":"^[A-Z]+$"},` +
			`"b":{"$ref":"#/$defs/pos","maximum":10},"c":{"$ref":"#/$defs/never"},"d":{"$ref":"#/$defs/always"},` +
			`"e":{"const":"on"},"f":{"enum":["x","y"],"type":"string"},"g":false,"h":true,` +
			`"i":{"type":"number","minimum":-1.5,"maximum":1e3},"j":{"type":["integer","null"]},` +
			`"k":{"type":"array","items":{"$ref":"#/$defs/pos"},"uniqueItems":true,"maxItems":2},` +
			`"l":{"type":"object","additionalProperties":{"type":"integer","maximum":3},"required":["z"],"properties":{"z":{"const":"zz"}}},` +
			`"m":{"format":"email"},"n":{"type":"string","format":"date"}},` +
			`"required":["a","b"],"additionalProperties":false}`,
		"recursive": `{"type":"object","properties":{"name":{"type":"string","minLength":2},` +
			`"children":{"type":"array","items":{"$ref":"#"},"maxItems":2}},"required":["name"],"additionalProperties":false}`,
		"cycle": `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"type":"object","properties":{"x":{"$ref":"#/$defs/a"}}}`,
		"draft7": `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",` +
			`"properties":{"a":{"type":"string","maxLength":2}},"additionalProperties":false}`,
		"root array": `{"type":"array","items":{"type":"string","enum":["a","b"]},"maxItems":3}`,
	} {
		var s jsonschema.Schema
		require.NoError(t, json.Unmarshal([]byte(raw), &s), name)
		v, err := newValidator(&s)
		require.NoError(t, err, name)
		out[name] = v
	}
	return out
}

// xpFull is what the full path says of body: the issues, the violated schema, the counts; ok
// is false when the body is not JSON the pipeline validates.
func xpFull(v *validator, body string, params map[string]any) (issues any, violated string, total int, atLeast, ok bool) {
	inst, err := decodeBody([]byte(body))
	if err != nil {
		return nil, "", 0, false, false
	}
	if params != nil {
		obj, isObj := inst.(map[string]any)
		if !isObj {
			return nil, "", 0, false, false
		}
		for k, val := range params {
			if _, dup := obj[k]; dup {
				return nil, "", 0, false, false // parameter_in_body
			}
			obj[k] = val
		}
	}
	is, vio, total, atLeast := v.check(inst)
	return is, string(vio), total, atLeast, true
}

// xpCompare checks the explanation of body against the full path.
func xpCompare(t *testing.T, v *validator, name, body string, params map[string]any) (explained bool) {
	t.Helper()
	var present uint64
	for k := range params {
		present |= v.fast.props[k].bit
	}
	issues, violated, total, atLeast, ok := v.explainText(body, present, params != nil, countValues(params))
	if !ok {
		return false
	}
	wantIssues, wantViolated, wantTotal, wantAtLeast, valid := xpFull(v, body, params)
	if !valid {
		t.Fatalf("%s: explained a body the full path does not validate: %s", name, body)
	}
	if wantIssues == nil || reflect.ValueOf(wantIssues).Len() == 0 {
		t.Fatalf("%s: explained a body the full path accepts: %s", name, body)
	}
	if !reflect.DeepEqual(wantIssues, any(issues)) || wantViolated != string(violated) || wantTotal != total || wantAtLeast != atLeast {
		t.Fatalf("%s: the explanation differs for %s\nfull:      %+v\n           %s %d %v\nexplained: %+v\n           %s %d %v",
			name, body, wantIssues, wantViolated, wantTotal, wantAtLeast, issues, violated, total, atLeast)
	}
	return true
}

// TestExplainBench explains the benchmark's invalid order as the full path does.
func TestExplainBench(t *testing.T) {
	t.Parallel()
	v := xpSchemas(t)["xpOrder"]
	body := `{"customer_id":"CUS-8F3K2","email":"ada@example.com","currency":"usd$",
"items":[{"sku":"book-1","quantity":250,"price":12.5}]}`
	require.True(t, xpCompare(t, v, "xpOrder", body, nil), "not explained")
}

// TestExplainCases explains one violation of each kind, and leaves alone what it does not
// decide exactly.
func TestExplainCases(t *testing.T) {
	t.Parallel()
	vs := xpSchemas(t)
	for _, c := range []struct {
		schema, body string
		explained    bool
	}{
		{"refs", `{"a":"ab","b":1}`, true},
		{"refs", `{"a":"abcd","b":0}`, true},
		{"refs", `{"a":"ABC","b":11,"c":1,"d":{"x":[1,2]},"e":"off","f":"X","g":null,"h":[]}`, true},
		{"refs", `{"a":"ABC","b":1,"e":1,"f":2,"i":1001,"j":1.5,"l":{"q":4}}`, true},
		{"refs", `{"a":"ABC","b":1,"l":{"z":"zz","q":"x"},"m":"nope","n":"2020-13-01"}`, true},
		{"refs", `{"a":"ABC","b":1,"k":[1,2,3]}`, false}, // uniqueItems over numbers
		{"refs", `{"a":"ABC","b":1,"m":5}`, false},       // a format on a number
		{"refs", `{"a":"ABC","b":1,"k":["x","x"]}`, true},
		{"refs", `{"a":"ABC","b":1,"i":1e-400}`, false},
		{"refs", `{"a":"ABC","b":1,"i":12345678901234567}`, false},
		{"refs", `{"a":"ABC","b":1,"zz":1,"a":"ABC"}`, false},          // named twice
		{"refs", `{"a":"ABC","b":1,"\u0061":"ABC"}`, false},            // an escaped name
		{"refs", `{"a":"ABC","b":1,"k":[1,1],`, false},                 // not JSON
		{"refs", `{"a":"ABC","b":1,"d":{"x":1,"x":2},"e":"x"}`, false}, // named twice, deeper
		{"draft7", `{"a":"abc"}`, false},
		{"root array", `["a","c","d","e"]`, true},
		{"root array", `"a"`, true},
		{"xpTree", `{"name":"a","children":[{"name":"b","children":[{"name":"cc","labels":{"x":"1"}}]}]}`, true},
		{"xpTree", `{"name":"aa","flags":["a","a"],"matrix":[[1],[2],["3"]],"meta":{"k":[1,{"z":null}]}}`, true},
		{"xpTree", `{"name":"aa","flags":[],"extra":{"a":1},"children":[null,{}]}`, true},
		{"vtOrder", vtOrderJSON(t, map[string]any{"tags": []any{"gift", "gift", "x", "rush"}, "weight": 10, "items": []any{}}), true},
		{"vtOrder", vtOrderJSON(t, map[string]any{"discount": 0.07}), false}, // multipleOf
	} {
		t.Run(c.schema+" "+c.body, func(t *testing.T) {
			v := vs[c.schema]
			assert.Equal(t, c.explained, xpCompare(t, v, c.schema, c.body, nil))
		})
	}
}

// TestExplainAgrees holds the explanation to the full path on random mutations of valid
// inputs: whenever it explains a body, its answer is the full path's, byte for byte.
func TestExplainAgrees(t *testing.T) {
	t.Parallel()
	vs := xpSchemas(t)
	seeds := map[string][]string{
		"vtOrder": {vtOrderJSON(t, map[string]any{"email": "ann@example.com", "tags": []any{"gift"}, "weight": 3,
			"note": "hi", "channel": "api", "a/b~c": 1})},
		"xpOrder":    {`{"customer_id":"cus_8f3k2","email":"ada@example.com","currency":"eur","items":[{"sku":"book-1","quantity":2,"price":12.5},{"sku":"pen-7","quantity":10,"price":1.2}],"note":"leave at the door","gift":true}`},
		"xpTree":     {`{"name":"root","children":[{"name":"kid","labels":{"a":1}}],"meta":{"x":[1,"y"]},"matrix":[[1,2]],"flags":["p","q"],"extra":{"k":"v"}}`},
		"refs":       {`{"a":"ABC","b":3,"d":[1],"e":"on","f":"x","h":1,"i":0.5,"j":null,"k":[1,2],"l":{"z":"zz","w":1},"m":"a@b.co","n":"2024-02-29"}`},
		"draft7":     {`{"a":"ab"}`},
		"recursive":  {`{"name":"ab","children":[{"name":"cd","children":[{"name":"ef"}]}]}`},
		"cycle":      {`{"y":1}`},
		"root array": {`["a","b"]`},
	}
	rnd := rand.New(rand.NewPCG(24, 24))
	explained, tried := 0, 0
	for name, v := range vs {
		pool := xpKeys(v)
		for _, seed := range seeds[name] {
			var base any
			require.NoError(t, json.Unmarshal([]byte(seed), &base), name)
			for range 3000 {
				inst := xpMutate(rnd, xpCopy(base), pool, 1+rnd.IntN(4))
				b, err := json.Marshal(inst)
				require.NoError(t, err)
				tried++
				if xpCompare(t, v, name, string(b), nil) {
					explained++
				}
			}
		}
	}
	t.Logf("explained %d of %d bodies", explained, tried)
	assert.Greater(t, explained, tried/3, "the explanation should answer most mutations")
}

// TestExplainWithParameters holds the explanation to the full path for an operation with
// parameters, which the instance holds beside the body's members.
func TestExplainWithParameters(t *testing.T) {
	t.Parallel()
	s, params, err := inputSchema(reflect.TypeFor[vtOrder]())
	require.NoError(t, err)
	v, err := newValidator(s)
	require.NoError(t, err)
	v.fast.markParams(params)
	rnd := rand.New(rand.NewPCG(7, 7))
	pool := xpKeys(v)
	var base any
	require.NoError(t, json.Unmarshal([]byte(vtOrderJSON(t, map[string]any{"id": nil})), &base))
	explained := 0
	for i := range 2000 {
		ps := map[string]any{"id": "ord_1"}
		if i%2 == 0 {
			ps["limit"] = json.Number("5")
		}
		if i%5 == 0 {
			delete(ps, "id") // a required parameter missing
		}
		inst := xpMutate(rnd, xpCopy(base), pool, 1+rnd.IntN(3))
		b, err := json.Marshal(inst)
		require.NoError(t, err)
		if xpCompare(t, v, "vtOrder with parameters", string(b), ps) {
			explained++
		}
	}
	assert.Greater(t, explained, 500)
}

// xpKeys are the member names a mutation may use: the schema's, and some it does not know.
func xpKeys(v *validator) []string {
	keys := []string{"x", "colour", "a/b", "~", "zz", "q"}
	for ptr := range v.byPtr {
		if i := strings.LastIndex(ptr, "/properties/"); i >= 0 {
			keys = append(keys, pointerUnescape(ptr[i+len("/properties/"):]))
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func xpCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	_ = d.Decode(&out)
	return out
}

// xpScalars are values a mutation puts in place: of every type, near the bounds, and in the
// enums, patterns and formats of the schemas, or close to them.
var xpScalars = []any{
	"", "a", "ab", "ABC", "abcd", "Usd", " usd ", "usd", "eur", "gift", "rush", "api", "web", "on", "off",
	"x", "y", "X", "cus_1", "cus_X", "CUS-1", "ord_1", "sku_a", "sku_", "book-1", "é", strings.Repeat("é", 11),
	"a@b.co", "not an email", "2024-02-29", "2023-02-29", "5", "12.5", "true", "zz", "line\nbreak", "q\"uote",
	"<ABC>", "A&B", "\u2028", " 7 ",
	json.Number("0"), json.Number("1"), json.Number("-1"), json.Number("2"), json.Number("3"), json.Number("9"),
	json.Number("10"), json.Number("11"), json.Number("50"), json.Number("51"), json.Number("100"),
	json.Number("101"), json.Number("250"), json.Number("0.5"), json.Number("2.5"), json.Number("-1.5"),
	json.Number("-1.6"), json.Number("1e2"), json.Number("100.0"), json.Number("1e3"), json.Number("1001"),
	json.Number("9.5"), json.Number("0.07"), json.Number("12345678901234567890"), json.Number("1e-400"),
	true, false, nil,
}

// xpValue is a random value, nested up to depth.
func xpValue(rnd *rand.Rand, pool []string, depth int) any {
	switch n := rnd.IntN(10); {
	case n < 6 || depth <= 0:
		return xpScalars[rnd.IntN(len(xpScalars))]
	case n < 8:
		out := make([]any, rnd.IntN(5))
		for i := range out {
			if rnd.IntN(2) == 0 && i > 0 {
				out[i] = out[i-1]
			} else {
				out[i] = xpValue(rnd, pool, depth-1)
			}
		}
		return out
	default:
		out := map[string]any{}
		for range rnd.IntN(5) {
			out[pool[rnd.IntN(len(pool))]] = xpValue(rnd, pool, depth-1)
		}
		return out
	}
}

// xpMutate changes n random places of v: a value replaced, a member removed or added, an
// element added or removed.
func xpMutate(rnd *rand.Rand, v any, pool []string, n int) any {
	for range n {
		v = xpMutateOne(rnd, v, pool)
	}
	return v
}

func xpMutateOne(rnd *rand.Rand, v any, pool []string) any {
	switch x := v.(type) {
	case map[string]any:
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		})
		switch r := rnd.IntN(10); {
		case r < 6 && len(keys) > 0:
			k := keys[rnd.IntN(len(keys))]
			x[k] = xpMutateOne(rnd, x[k], pool)
		case r < 8 && len(keys) > 0:
			delete(x, keys[rnd.IntN(len(keys))])
		default:
			x[pool[rnd.IntN(len(pool))]] = xpValue(rnd, pool, 2)
		}
		return x
	case []any:
		switch r := rnd.IntN(10); {
		case r < 6 && len(x) > 0:
			i := rnd.IntN(len(x))
			x[i] = xpMutateOne(rnd, x[i], pool)
		case r < 8 && len(x) > 0:
			i := rnd.IntN(len(x))
			return append(x[:i], x[i+1:]...)
		default:
			if len(x) > 0 && rnd.IntN(2) == 0 {
				return append(x, x[rnd.IntN(len(x))])
			}
			return append(x, xpValue(rnd, pool, 2))
		}
		return x
	}
	if rnd.IntN(4) == 0 {
		return v
	}
	return xpValue(rnd, pool, 2)
}

// FuzzExplain holds the explanation to the full path on any body, for each schema, and on a
// mutation of a valid input that the seed picks.
func FuzzExplain(f *testing.F) {
	for i, s := range []string{
		`{"customer_id":"CUS-8F3K2","email":"ada@example.com","currency":"usd$","items":[{"sku":"book-1","quantity":250,"price":12.5}]}`,
		`{"a":"ABC","b":11,"c":1,"d":{"x":[1,2]},"e":"off","f":"X","g":null,"h":[],"k":[1,1]}`,
		`{"name":"a","children":[{"name":"b","labels":{"x":"1"}}],"flags":["a","a"]}`,
		vtMany,
	} {
		f.Add(s, uint64(i))
	}
	vs := xpSchemas(f)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range vs {
			if !yield(k) {
				return
			}
		}
	})
	seed := `{"a":"ABC","b":3,"name":"root","customer_id":"cus_1","currency":"usd","email":"a@b.co",` +
		`"items":[{"sku":"a","quantity":1,"price":2}],"children":[{"name":"kid"}],"flags":["p"],"k":[1]}`
	var base any
	if err := json.Unmarshal([]byte(seed), &base); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string, n uint64) {
		rnd := rand.New(rand.NewPCG(n, n>>7))
		for _, name := range names {
			v := vs[name]
			xpCompare(t, v, name, body, nil)
			b, err := json.Marshal(xpMutate(rnd, xpCopy(base), xpKeys(v), 1+rnd.IntN(4)))
			if err != nil {
				t.Fatal(err)
			}
			xpCompare(t, v, name, string(b), nil)
		}
	})
}

// The collector sorts as a stable sort by compareIssues does, few issues or many.
func TestSortIssues(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 2))
	toks := [][]string{nil, {"a"}, {"a", "0"}, {"a", "10"}, {"a", "2"}, {"b"}, {"a~b"}}
	type pair struct {
		is remedy.Issue
		w  issueWhere
	}
	for range 3000 {
		n := rnd.IntN(40)
		var c issueCollector
		var want []pair
		for i := range n {
			is := remedy.Issue{Code: []string{"enum", "type", "pattern"}[rnd.IntN(3)], Message: []string{"x", "y"}[rnd.IntN(2)]}
			w := issueWhere{toks: toks[rnd.IntN(len(toks))], dups: i}
			c.issues, c.where = append(c.issues, is), append(c.where, w)
			want = append(want, pair{is, w})
		}
		slices.SortStableFunc(want, func(a, b pair) int { return compareIssues(&a.is, &a.w, &b.is, &b.w) })
		c.sort()
		for i := range want {
			require.Equal(t, want[i].is, c.issues[i])
			require.Equal(t, want[i].w, c.where[i])
		}
	}
}
