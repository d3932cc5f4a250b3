package server_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/server"
)

// Shapes of invalid bodies whose validation the library would walk whole: many invalid
// values in one container, at one level or several, in arrays and in maps.

// Batch is an input with containers of every kind the pruning handles: arrays of objects,
// arrays of arrays, maps of objects and of integers.
type Batch struct {
	Name   string            `json:"name"`
	Items  []Item            `json:"items,omitempty"`
	Rows   [][]Item          `json:"rows,omitempty"`
	Grid   [][]int           `json:"grid,omitempty" schema:"maxItems=1000"`
	Counts map[string]int    `json:"counts,omitempty"`
	Byname map[string]Item   `json:"byname,omitempty"`
	Tags   []string          `json:"tags,omitempty" schema:"uniqueItems"`
	Deep   [][][]int         `json:"deep,omitempty"`
	Groups map[string][]Item `json:"groups,omitempty"`
}

// hostileAPI serves POST /v1/batches, which takes a Batch.
func hostileAPI(t testing.TB) *server.API {
	t.Helper()
	api, err := server.New()
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, server.Post(api, "/v1/batches", func(ctx context.Context, in Batch) (Batch, error) {
		return in, nil
	}, server.OperationID("create_batch")))
	return api
}

// fill writes prefix, then elem(i) for i = 0, 1, ... separated by commas while the body stays
// under size bytes, then suffix.
func fill(size int, prefix, suffix string, elem func(i int) string) []byte {
	var b bytes.Buffer
	b.WriteString(prefix)
	for i := 0; ; i++ {
		e := elem(i)
		if b.Len()+len(e)+1+len(suffix) > size {
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e)
	}
	b.WriteString(suffix)
	return b.Bytes()
}

// hostileShape is one invalid body of about 1 MiB, and the path of its first issue.
type hostileShape struct {
	name  string
	body  []byte
	first string
}

// hostileShapes are the worst bodies found, each just under 1 MiB.
func hostileShapes() []hostileShape {
	const size = 1<<20 - 64
	zero := func(int) string { return "0" }
	undecided := fill(size, `{"name":"b","grid":[[`, `,""]]}`, func(int) string { return "1e0" })
	return []hostileShape{
		// ≈524k items where objects are expected.
		{"ArrayOfZeros", fill(size, `{"name":"b","items":[`, `]}`, zero), "/items/0"},
		// Objects that each break two rules.
		{"ArrayOfBadObjects", fill(size, `{"name":"b","items":[`, `]}`, func(int) string { return `{"sku":"","quantity":0}` }), "/items/0/quantity"},
		// Valid items, then invalid ones past the first half.
		{"ValidThenInvalid", fill(size, `{"name":"b","items":[`, `]}`, func(i int) string {
			if i < 20000 {
				return `{"sku":"a","quantity":1}`
			}
			return "0"
		}), "/items/20000"},
		// Arrays of arrays of invalid objects.
		{"NestedArrays", fill(size, `{"name":"b","rows":[`, `]}`, func(int) string {
			return `[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]`
		}), "/rows/0/0"},
		// Three levels of short arrays of strings where integers are expected.
		{"DeepArrays", fill(size, `{"name":"b","deep":[`, `]}`, func(int) string {
			return `[["a","a","a","a","a","a","a","a"],["a","a","a","a","a","a","a","a"],["a","a","a","a","a","a","a","a"],["a","a","a","a","a","a","a","a"]]`
		}), "/deep/0/0/0"},
		// Too many rows (maxItems) of invalid values.
		{"GridTooLong", fill(size, `{"name":"b","grid":[`, `]}`, func(int) string { return `[""]` }), "/grid"},
		// A map of integers whose values are strings.
		{"MapOfBadValues", fill(size, `{"name":"b","counts":{`, `}}`, func(i int) string { return `"` + strconv.Itoa(i) + `":""` }), "/counts/0"},
		// A map of objects whose values are not objects.
		{"MapOfBadObjects", fill(size, `{"name":"b","byname":{`, `}}`, func(i int) string { return `"` + strconv.Itoa(i) + `":0` }), "/byname/0"},
		// A map of arrays of invalid objects.
		{"MapOfArrays", fill(size, `{"name":"b","groups":{`, `}}`, func(i int) string { return `"` + strconv.Itoa(i) + `":[0,0,0,0,0,0,0,0]` }), "/groups/0/0"},
		// Integers the quick check does not decide (an exponent), all valid but the last.
		{"UndecidedIntegers", undecided, "/grid/0/" + strconv.Itoa(bytes.Count(undecided, []byte("1e0")))},
		// Many equal strings where they must be unique.
		{"DuplicateTags", fill(size, `{"name":"b","tags":[`, `]}`, func(int) string { return `"a"` }), "/tags"},
	}
}

// Row 7, continued: for every hostile shape, the first issue is the one the whole validation
// reports first, and the work is bounded by a small multiple of the body: it was 60 to 290
// bytes allocated a byte of body when the schema validator walked every invalid value and
// encoding/json decoded the body.
func TestHostileShapesBounded(t *testing.T) {
	api := hostileAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	for _, s := range hostileShapes() {
		t.Run(s.name, func(t *testing.T) {
			m := measure(t, "POST", srv.URL+"/v1/batches", string(s.body))
			env := envelope(t, m.status, m.header, m.body)
			require.Equal(t, 422, m.status, "%.300s", m.body)
			require.NotEmpty(t, env.Issues)
			assert.Equal(t, s.first, env.Issues[0].Path)
			assert.LessOrEqual(t, len(env.Issues), server.MaxIssues+1)
			assert.Less(t, len(m.body), 64<<10)
			t.Logf("body %d bytes: allocated %d bytes (%.1f a byte) in %d allocations, answered %d bytes",
				len(s.body), m.bytes, float64(m.bytes)/float64(len(s.body)), m.mallocs, len(m.body))
			assert.Less(t, m.bytes, uint64(40*len(s.body)), "bytes allocated")
		})
	}
}
