package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records the failures reported to it.
type recorder struct {
	testing.TB
	errs, fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, a...))
}

// TestChecks holds the suite's own checks to what they claim: each reports exactly the
// failures it should, the must forms through Fatal and the others through Error, with the
// message first.
func TestChecks(t *testing.T) {
	errFull := errors.New("full")
	r := &recorder{}
	mustNoError(r, nil)
	mustNoError(r, errFull, "claim %d", 3)
	mustTrue(r, true)
	mustTrue(r, false)
	mustFalse(r, true)
	mustEqual(r, []byte("a"), []byte("a"))
	mustEqual(r, []byte("a"), []byte("b"), "the binding")
	mustNotEqual(r, "x", "x")
	mustNotNil(r, (*int)(nil))
	mustError(r, nil)
	mustErrorIs(r, fmt.Errorf("wrapped: %w", errFull), errFull)
	mustErrorIs(r, errors.New("other"), errFull)
	if len(r.fatals) != 8 || len(r.errs) != 0 {
		t.Fatalf("must forms: %d fatal, %d errors: %q", len(r.fatals), len(r.errs), r.fatals)
	}
	if !strings.HasPrefix(r.fatals[0], "claim 3: ") || !strings.HasPrefix(r.fatals[3], "the binding: ") {
		t.Errorf("messages: %q", r.fatals)
	}

	r = &recorder{}
	ok := checkEqual(r, 1, 1) && checkTrue(r, true) && checkFalse(r, false) && checkEmpty(r, []byte{}) &&
		checkEmpty(r, "") && checkError(r, errFull) && checkErrorIs(r, errFull, errFull)
	if !ok || len(r.errs) != 0 {
		t.Fatalf("passing checks failed: %q", r.errs)
	}
	failed := !checkEqual(r, 1, 2) && !checkTrue(r, false) && !checkFalse(r, true) && !checkEmpty(r, []int{1}) &&
		!checkError(r, nil) && !checkErrorIs(r, errors.New("other"), errFull)
	if !failed || len(r.errs) != 6 || len(r.fatals) != 0 {
		t.Errorf("failing checks: %d errors, %d fatal: %q", len(r.errs), len(r.fatals), r.errs)
	}
}
