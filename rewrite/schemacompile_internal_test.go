package rewrite

import (
	"strconv"
	"sync"
	"testing"
)

// The cache of compiled schemas stays within its bounds, whatever schemas come, from many
// goroutines at once, and a schema is compiled once while it stays.
func TestSchemaCacheBounded(t *testing.T) {
	t.Parallel()
	c := schemaCache{m: map[string]*compiledSchema{}}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				raw := []byte(`{"type":"object","title":"` + strconv.Itoa(g*1000+i) + `"}`)
				if s := c.get(raw); s.sch == nil {
					t.Errorf("%s: %v", raw, s.err)
				}
			}
		}()
	}
	wg.Wait()
	if len(c.m) > schemaCacheEntries || c.bytes > schemaCacheBytes {
		t.Fatalf("%d entries, %d bytes: over the bounds", len(c.m), c.bytes)
	}
	sum := 0
	for k := range c.m {
		sum += len(k)
	}
	if sum != c.bytes {
		t.Fatalf("bytes %d, keys hold %d", c.bytes, sum)
	}
	raw := []byte(`{"type":"string"}`)
	if c.get(raw) != c.get(raw) {
		t.Fatal("a schema compiled twice")
	}

	// Large schemas are bounded by their bytes, not their number.
	big := make([]byte, 0, schemaMaxBytes)
	big = append(big, `{"description":"`...)
	for len(big) < schemaMaxBytes-100 {
		big = append(big, 'x')
	}
	big = append(big, `"}`...)
	for i := range 64 {
		c.get(append([]byte(`{"title":"`+strconv.Itoa(i)+`","allOf":[`), append(big, ']', '}')...))
	}
	if c.bytes > schemaCacheBytes {
		t.Fatalf("%d bytes kept: over the bound", c.bytes)
	}
}
