package bench

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/remedy-go/remedy/internal/corpus"
)

// sample is one recorded response of remedy's envelope corpus.
type sample struct {
	dialect string
	status  int
	header  http.Header
	body    []byte
}

// loadCorpus reads every ../testdata/envelopes/<dialect>/<name>.http, the corpus remedy's own
// golden tests and BenchmarkParse read, in the same way.
func loadCorpus(tb testing.TB) []sample {
	tb.Helper()
	all, err := corpus.Load(filepath.Join("..", "testdata", "envelopes"))
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]sample, len(all))
	for i, c := range all {
		out[i] = sample{dialect: c.Dialect, status: c.Status, header: c.Header, body: c.Body}
	}
	return out
}
