package server

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wideValidator validates an object of n integer properties p00, p01, ..., each at most 1, so
// that every pair of them broken at once needs an excerpt of its own.
func wideValidator(t *testing.T, n int) *validator {
	t.Helper()
	one := 1.0
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for i := range n {
		s.Properties[fmt.Sprintf("p%02d", i)] = &jsonschema.Schema{Type: "integer", Maximum: &one}
	}
	v, err := newValidator(s)
	require.NoError(t, err)
	return v
}

// wideExcerpt is the excerpt expected when properties i and j are broken.
func wideExcerpt(i, j int) string {
	return fmt.Sprintf(`{"type":"object","properties":{"p%02d":{"type":"integer","maximum":1},"p%02d":{"type":"integer","maximum":1}}}`, i, j)
}

// TestExcerptCacheBounded breaks more pairs of properties than the excerpt cache keeps: each
// answer inlines the excerpt of its own pair, whether it was cut, kept or looked up, and the
// cache stops at its bound.
func TestExcerptCacheBounded(t *testing.T) {
	t.Parallel()
	const n = 30 // 435 pairs
	require.Greater(t, n*(n-1)/2, maxExcerpts)
	v := wideValidator(t, n)
	for round := range 2 { // the second round reads what the first kept, and cuts the rest again
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				in := vtDecode(t, fmt.Sprintf(`{"p%02d":5,"p%02d":7}`, i, j))
				issues, violated := v.validate(in)
				require.Len(t, issues, 2, "round %d, pair %d %d", round, i, j)
				require.JSONEq(t, wideExcerpt(i, j), string(violated), "round %d, pair %d %d", round, i, j)
			}
		}
	}
	assert.Len(t, maybe(v.excerpts.Load()), maxExcerpts)
}

// TestExcerptCacheConcurrent validates from several goroutines at once (run it with -race),
// more pairs than the cache keeps: every answer holds the excerpt of its own input, and the
// cache holds no more than its bound.
func TestExcerptCacheConcurrent(t *testing.T) {
	t.Parallel()
	const n = 24 // 276 pairs
	v := wideValidator(t, n)
	var wg sync.WaitGroup
	errs := make(chan string, 8*n*n)
	for g := range 8 {
		wg.Go(func() {
			for k := range n * n {
				i, j := (k+g)%n, (k/n+g+1)%n
				if i == j {
					continue
				}
				i, j = min(i, j), max(i, j)
				_, violated := v.validate(vtDecodeQuiet(fmt.Sprintf(`{"p%02d":2,"p%02d":3}`, i, j)))
				var got, want any
				if json.Unmarshal(violated, &got) != nil || json.Unmarshal([]byte(wideExcerpt(i, j)), &want) != nil ||
					fmt.Sprint(got) != fmt.Sprint(want) {
					errs <- fmt.Sprintf("pair %d %d: %s", i, j, violated)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	assert.Len(t, maybe(v.excerpts.Load()), maxExcerpts)
}

// vtDecodeQuiet decodes an instance off the test's goroutine; the inputs are valid JSON.
func vtDecodeQuiet(s string) any {
	v, _ := decodeInstance([]byte(s))
	return v
}

// TestEnumValuesNotShared checks that an issue's allowed values are its own: editing them does
// not change what the next answer lists.
func TestEnumValuesNotShared(t *testing.T) {
	t.Parallel()
	v := vtValidator(t)
	in := vtOrderJSON(t, map[string]any{"currency": "yen"})
	issues, _ := v.validate(vtDecode(t, in))
	require.Len(t, issues, 1)
	require.Equal(t, vtRaws(`"usd"`, `"eur"`, `"gbp"`), issues[0].AllowedValues)
	issues[0].AllowedValues[0] = vtRaw(`"yen"`)
	issues, _ = v.validate(vtDecode(t, in))
	assert.Equal(t, vtRaws(`"usd"`, `"eur"`, `"gbp"`), issues[0].AllowedValues)
}

func TestSchemaString(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]any{
		`"usd"`:               "usd",
		`""`:                  "",
		`"a\"b"`:              `a"b`,
		`"caf\u00e9 \\ done"`: `café \ done`,
		`12`:                  nil,
		`null`:                nil,
		`["usd"]`:             nil,
		`"`:                   nil,
	} {
		got, ok := schemaString(json.RawMessage(raw))
		if want == nil {
			assert.False(t, ok, "%s", raw)
			continue
		}
		assert.True(t, ok, "%s", raw)
		assert.Equal(t, want, got, "%s", raw)
	}
}
