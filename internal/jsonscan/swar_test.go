package jsonscan

import (
	"strings"
	"testing"
)

// TestSkipPlainEveryByte checks the eight-bytes-at-a-time scan against the table, for every
// byte value at every position of a word, behind plain bytes and behind other special bytes.
func TestSkipPlainEveryByte(t *testing.T) {
	t.Parallel()
	slow := func(s string, i int) int {
		for i < len(s) && plainByte[s[i]] {
			i++
		}
		return i
	}
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 20; pos++ {
			for _, tail := range []string{"", "aaaaaaaaaaaaaaaa", "\"\\\x01\xff\x80aaaaaaaaaaaaaaaa"} {
				b := []byte("aaaaaaaaaaaaaaaaaaaa")
				b[pos] = byte(c)
				s := string(b) + tail
				for start := 0; start < 3; start++ {
					if got, want := SkipPlain(s, start), slow(s, start); got != want {
						t.Fatalf("SkipPlain(%q, %d) = %d, want %d", s, start, got, want)
					}
				}
			}
		}
	}
}

func TestHasControlOrSpaceEveryByte(t *testing.T) {
	t.Parallel()
	for c := 0; c < 256; c++ {
		for n := 1; n < 20; n++ {
			for pos := 0; pos < n; pos++ {
				b := []byte(strings.Repeat("a", n))
				b[pos] = byte(c)
				if got, want := HasControlOrSpace(string(b)), c <= ' '; got != want {
					t.Fatalf("HasControlOrSpace(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
	if HasControlOrSpace("") || !HasControlOrSpace(strings.Repeat("\xff", 9)+" ") {
		t.Fatal("HasControlOrSpace is wrong at the edges")
	}
}
