package remedy_test

import (
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/envelopes")

func TestMain(m *testing.M) {
	remedy.SetNow(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	os.Exit(m.Run())
}

// sample is one recorded response of the corpus.
type sample struct {
	dialect string // the directory: the dialect Parse must recognize
	name    string
	path    string // without extension
	status  int
	header  http.Header
	body    []byte
}

// loadCorpus reads every testdata/envelopes/<dialect>/<name>.http.
func loadCorpus(tb testing.TB) []sample {
	tb.Helper()
	all, err := corpus.Load(filepath.Join("testdata", "envelopes"))
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]sample, len(all))
	for i, c := range all {
		out[i] = sample{dialect: c.Dialect, name: c.Name, path: c.Path, status: c.Status, header: c.Header, body: c.Body}
	}
	return out
}
