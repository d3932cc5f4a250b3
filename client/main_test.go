package client_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

func TestMain(m *testing.M) {
	client.SetNow(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	os.Exit(m.Run())
}

// loadCorpus reads the recorded answers under the module's testdata/envelopes.
func loadCorpus(tb testing.TB) []corpus.Sample {
	return corpus.MustLoad(tb, filepath.Join("..", "testdata", "envelopes"))
}
