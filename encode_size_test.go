package remedy

import (
	"path/filepath"
	"testing"

	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

// TestSizeHintFitsCorpus checks that both encodings of every corpus envelope fit in the
// buffer their size hint reserves, so that encoding allocates it once.
func TestSizeHintFitsCorpus(t *testing.T) {
	t.Parallel()
	all, err := corpus.Load(filepath.Join("testdata", "envelopes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		e, ok := Parse(s.Status, s.Header, s.Body)
		if !ok {
			continue
		}
		canon, _ := e.MarshalJSON()
		problem, _ := e.MarshalProblem()
		if hint := e.sizeHint(); len(canon) > hint+16 || len(problem) > hint+32 {
			t.Errorf("%s: hint %d, canonical %d bytes, problem %d bytes", s.Name, hint, len(canon), len(problem))
		}
	}
}
