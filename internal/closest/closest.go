// Package closest finds the name a mistyped one was probably meant to be, for the "did you
// mean" of an error.
package closest

import (
	"sort"
	"strings"
)

// Name returns the name among names nearest to name, by edit distance ignoring case (an
// insertion, a deletion, a substitution or two neighbours swapped each count one), when it is
// near enough to be a slip — at most a quarter of name's length, and at least 1, edits away.
// A name that is among names has no suggestion. Ties go to the first in sorted order.
func Name(name string, names []string) (string, bool) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	low := strings.ToLower(name)
	limit := max(1, len(name)/4)
	best, bestDist := "", limit+1
	for _, n := range sorted {
		if n == name {
			return "", false
		}
		if d := len(low) - len(n); d >= bestDist || -d >= bestDist {
			continue // too far apart by length alone
		}
		if d := Distance(low, strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best, best != ""
}

// Distance is the optimal string alignment distance between a and b in bytes: the
// insertions, deletions, substitutions and swaps of two neighbours that make one the other.
// Strings longer than 256 bytes are compared by their first 256, which bounds the quadratic
// cost (a route's path, a name).
func Distance(a, b string) int {
	a, b = a[:min(len(a), 256)], b[:min(len(b), 256)]
	// rows[i][j]: the distance between a[:i] and b[:j]; three rows kept.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
