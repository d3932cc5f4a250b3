package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
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
	files, err := filepath.Glob(filepath.Join("..", "testdata", "envelopes", "*", "*.http"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no corpus under ../testdata/envelopes: %v", err)
	}
	sort.Strings(files)
	out := make([]sample, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		s, err := parseHTTP(raw)
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		s.dialect = filepath.Base(filepath.Dir(f))
		out = append(out, s)
	}
	return out
}

// parseHTTP reads a recorded response: status line, header lines, blank line, body (byte for
// byte).
func parseHTTP(raw []byte) (sample, error) {
	var s sample
	raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	head, body, _ := bytes.Cut(raw, []byte("\n\n"))
	lines := strings.Split(string(head), "\n")
	parts := strings.SplitN(lines[0], " ", 3)
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/") {
		return s, fmt.Errorf("bad status line %q", lines[0])
	}
	status, err := strconv.Atoi(parts[1])
	if err != nil {
		return s, fmt.Errorf("bad status %q", parts[1])
	}
	s.status = status
	s.header = http.Header{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return s, fmt.Errorf("bad header line %q", l)
		}
		s.header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	s.body = body
	return s, nil
}
