// Package corpus reads the envelope corpus, testdata/envelopes/<dialect>/<name>.http: recorded
// failure responses that the golden tests, the benchmarks and the bench module share.
package corpus

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Sample is one recorded response.
type Sample struct {
	Dialect string // its directory: the dialect it is written in
	Name    string // its file name without .http
	Path    string // its path without .http, where its golden files go
	Status  int
	Header  http.Header
	Body    []byte
}

// Load reads every <dialect>/<name>.http under dir (testdata/envelopes), sorted by path.
func Load(dir string) ([]Sample, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.http"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no corpus under %s", dir)
	}
	sort.Strings(files)
	out := make([]Sample, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s, err := ParseHTTP(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		s.Dialect = filepath.Base(filepath.Dir(f))
		s.Name = strings.TrimSuffix(filepath.Base(f), ".http")
		s.Path = strings.TrimSuffix(f, ".http")
		out = append(out, s)
	}
	return out, nil
}

// ParseHTTP reads a recorded response: status line, header lines, blank line, body. The body is
// taken byte for byte (framing headers such as Transfer-Encoding are recorded, not applied).
func ParseHTTP(raw []byte) (Sample, error) {
	var s Sample
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
	s.Status = status
	s.Header = http.Header{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return s, fmt.Errorf("bad header line %q", l)
		}
		s.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	s.Body = body
	return s, nil
}
