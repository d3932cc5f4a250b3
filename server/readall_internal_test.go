package server

import (
	"bytes"
	"strings"
	"testing"
)

// A request declaring the body limit and sending one byte gets a buffer sized by what
// arrived, not by what it declared; an honest body of the declared length is read whole.
func TestReadAllGrowsWithWhatArrives(t *testing.T) {
	t.Parallel()
	b, err := readAll(strings.NewReader("{"), DefaultMaxBody, DefaultMaxBody)
	if err != nil || string(b) != "{" {
		t.Fatalf("got %q, %v", b, err)
	}
	if cap(b) > readFirst+1 {
		t.Errorf("one byte that declared %d got a buffer of %d", DefaultMaxBody, cap(b))
	}
	body := bytes.Repeat([]byte("x"), DefaultMaxBody)
	b, err = readAll(bytes.NewReader(body), int64(len(body)), DefaultMaxBody)
	if err != nil || !bytes.Equal(b, body) {
		t.Fatalf("an honest body of the limit: %d bytes, %v", len(b), err)
	}
	if _, err = readAll(bytes.NewReader(append(body, 'y')), int64(len(body)), DefaultMaxBody); err != errTooLarge {
		t.Errorf("a body over the limit that declared less: %v", err)
	}
}
