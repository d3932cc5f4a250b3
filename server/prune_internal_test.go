package server

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pruneSchema uses every keyword the pruning looks through, and some it does not.
const pruneSchema = `{
	"type": "object",
	"properties": {
		"items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 150, "maxItems": 200},
		"tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"$ref": "#/$defs/item"}], "items": {"type": "integer", "maximum": 5}},
		"grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 1}, "uniqueItems": true}},
		"tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": true},
		"counts": {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 40},
		"meta": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["x-req"],
			"patternProperties": {"^x-": {"type": "integer"}, "^x-n": {"minimum": 3}}, "additionalProperties": false, "minProperties": 2},
		"any": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/item"}]}},
		"nested": {"type": "object", "additionalProperties": {"type": "array", "items": {"$ref": "#/$defs/item"}}}
	},
	"required": ["items"],
	"additionalProperties": false,
	"$defs": {
		"item": {"type": "object", "properties": {"sku": {"type": "string", "pattern": "^sku_"}, "quantity": {"type": "integer", "minimum": 1}},
			"required": ["sku", "quantity"], "additionalProperties": false}
	}
}`

func pruneValidator(t testing.TB) *validator {
	t.Helper()
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal([]byte(pruneSchema), &s))
	v, err := newValidator(&s)
	require.NoError(t, err)
	require.True(t, v.prunable)
	return v
}

// pruneValue is a random value of the shapes pruneSchema describes, mostly invalid.
func pruneValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(14); {
	case n < 3:
		return json.Number(strconv.Itoa(r.IntN(8) - 1))
	case n < 5:
		return []string{"a", "sku_1", "x", "abcd", ""}[r.IntN(5)]
	case n == 5:
		return nil
	case n == 6:
		return json.Number("1.5")
	case n == 7 && depth > 0:
		return pruneArray(r, depth-1, r.IntN(8))
	case n < 11:
		item := map[string]any{}
		if r.IntN(4) > 0 {
			item["sku"] = pruneValue(r, 0)
		}
		if r.IntN(4) > 0 {
			item["quantity"] = pruneValue(r, 0)
		}
		if r.IntN(6) == 0 {
			item["extra"+strconv.Itoa(r.IntN(3))] = pruneValue(r, 0)
		}
		return item
	case depth > 0:
		return pruneObject(r, depth-1, r.IntN(8))
	}
	return true
}

func pruneArray(r *rand.Rand, depth, n int) []any {
	out := make([]any, n)
	var last any
	for i := range out {
		if i > 0 && r.IntN(5) == 0 {
			out[i] = last // duplicates, for uniqueItems
			continue
		}
		out[i] = pruneValue(r, depth)
		last = out[i]
	}
	return out
}

func pruneObject(r *rand.Rand, depth, n int) map[string]any {
	out := map[string]any{}
	for range n {
		k := []string{"a", "b", "x-", "x-n", "x-1", "10", "9", "a/b", "~"}[r.IntN(9)] + strconv.Itoa(r.IntN(40))
		out[k] = pruneValue(r, depth)
	}
	return out
}

// pruneInstance is a random instance for pruneSchema, with containers long enough to be cut.
func pruneInstance(r *rand.Rand) map[string]any {
	in := map[string]any{}
	size := func() int { return []int{0, 3, 40, 150, 400}[r.IntN(5)] }
	for _, name := range []string{"items", "tuple", "grid", "tags", "any"} {
		if r.IntN(3) > 0 {
			in[name] = pruneArray(r, 1, size())
		}
	}
	for _, name := range []string{"counts", "meta", "nested"} {
		if r.IntN(3) > 0 {
			in[name] = pruneObject(r, 1, size())
		}
	}
	if r.IntN(4) == 0 {
		in["unknown"+strconv.Itoa(r.IntN(20))] = json.Number("1")
	}
	if r.IntN(5) == 0 {
		in["items"] = json.Number("1e99999") // a number set aside
	}
	return in
}

// The pruning changes nothing that is listed: on random instances, the issues listed and the
// schema inlined are those of the whole validation; only the count of the issues left out
// may become a lower bound.
func TestPruneSameIssues(t *testing.T) {
	t.Parallel()
	v := pruneValidator(t)
	ov := vtValidator(t)
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	cut := 0
	for i := range 400 {
		val, in := v, any(pruneInstance(r))
		if i%4 == 3 { // vtOrder's schema too, which the pipeline's tests use
			val = ov
			in = map[string]any{"id": "ord_1", "customer_id": "cus_1", "currency": "usd", "items": pruneArray(r, 1, size(r)), "tags": pruneArray(r, 0, size(r))}
		}
		whole, wv, wtotal, wAtLeast := val.checkPruned(in, -1)
		pruned, pv, ptotal, atLeast := val.checkPruned(in, 0)
		require.False(t, wAtLeast)
		require.Equal(t, string(wv), string(pv), "instance %d", i)
		if len(whole) <= MaxIssues {
			require.Equal(t, whole, pruned, "instance %d", i)
			require.Equal(t, wtotal, ptotal)
			require.False(t, atLeast)
			continue
		}
		require.Len(t, pruned, MaxIssues+1, "instance %d", i)
		require.Equal(t, whole[:MaxIssues], pruned[:MaxIssues], "instance %d", i)
		require.LessOrEqual(t, ptotal, wtotal)
		require.Greater(t, ptotal, MaxIssues)
		if atLeast {
			cut++
			require.Contains(t, pruned[MaxIssues].Message, "at least "+issuePlural(ptotal-MaxIssues, "more issue")+" found")
		} else {
			require.Equal(t, wtotal, ptotal)
			require.Equal(t, whole[MaxIssues], pruned[MaxIssues])
		}
		again, _, _, _ := val.checkPruned(in, 0)
		require.True(t, reflect.DeepEqual(pruned, again))
	}
	t.Logf("%d of 400 instances cut", cut)
	require.Positive(t, cut)
}

func size(r *rand.Rand) int { return []int{0, 3, 40, 150, 400}[r.IntN(5)] }

// integral agrees with the schema validator on which numbers are integers.
func TestIntegral(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12": true, "1e2": true, "1E+2": true, "100.0": true, "-2.5e1": true,
		"1.5": false, "1e-2": false, "100e-2": true, "120e-1": true, "123e-1": false, "0.0e-5": true,
		"0.5e1": true, "0.05e1": false, "-1.0": true, "1.000001e3": false, "1.000001e6": true, "10.0e-1": true,
	} {
		assert.Equal(t, want, integral(s), s)
	}
}

// FuzzPrune checks the pruning on any instance: the issues listed and the schema inlined are
// those of the whole validation.
func FuzzPrune(f *testing.F) {
	v := pruneValidator(f)
	f.Add([]byte(`{"items":[0,{"sku":1},[],"x"],"meta":{"x-1":"a","b":1},"counts":{"a":"b"},"tags":["a","a"]}`))
	f.Add([]byte(`{"tuple":["a",{"sku":"sku_1","quantity":1},9,9],"grid":[[0,0],[1,1]],"nested":{"a":[0]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		inst, err := decodeInstance(data)
		if err != nil {
			return
		}
		// Repeated, so that a small input has containers long enough to cut.
		if m, ok := inst.(map[string]any); ok {
			for k, e := range m {
				if a, ok := e.([]any); ok && len(a) > 0 {
					for len(a) < 2*MaxIssues {
						a = append(a, a...)
					}
					m[k] = a
				}
			}
		}
		whole, wv, _, _ := v.checkPruned(inst, -1)
		pruned, pv, _, _ := v.checkPruned(inst, 0)
		if string(wv) != string(pv) {
			t.Fatalf("schemas differ:\n%s\n%s", wv, pv)
		}
		n := min(len(whole), MaxIssues)
		if len(pruned) < n || !reflect.DeepEqual(whole[:n], pruned[:n]) {
			t.Fatalf("issues differ:\n%+v\n%+v", whole, pruned)
		}
		if len(whole) != len(pruned) {
			t.Fatalf("%d issues, %d pruned", len(whole), len(pruned))
		}
	})
}
