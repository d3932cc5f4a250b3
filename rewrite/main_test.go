package rewrite_test

import (
	"path/filepath"
	"testing"

	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

// loadCorpus reads the recorded answers under the module's testdata/envelopes.
func loadCorpus(tb testing.TB) []corpus.Sample {
	return corpus.MustLoad(tb, filepath.Join("..", "testdata", "envelopes"))
}
