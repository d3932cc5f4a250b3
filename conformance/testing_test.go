package conformance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

type recorder struct {
	errors, logs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, args...))
}
func (r *recorder) Logf(f string, args ...any) { r.logs = append(r.logs, fmt.Sprintf(f, args...)) }

func TestReportFailsEachFailedRule(t *testing.T) {
	rep := &Report{Results: []Result{
		{Rule: Rule{ID: "a", Statement: "A holds."}, Outcome: Pass},
		{Rule: Rule{ID: "b", Statement: "B holds."}, Outcome: Fail, Detail: "b broke",
			Evidence: []Exchange{{Request: "GET /b", Status: 500, Response: "oops"}}},
		{Rule: Rule{ID: "c", Statement: "C holds."}, Outcome: Skip, Detail: "no c"},
	}}
	var r recorder
	report(&r, rep)
	if assert.Len(t, r.errors, 1) {
		assert.True(t, strings.HasPrefix(r.errors[0], "conformance rule b failed: b broke"))
		assert.Contains(t, r.errors[0], "  > GET /b\n  < 500 oops")
	}
	assert.Equal(t, []string{"conformance rule c skipped: no c"}, r.logs)
}

// Every finding of a failure is reported, and every check skipped is logged, even of a rule
// that passed.
func TestReportShowsEveryFindingAndSkippedCheck(t *testing.T) {
	rep := &Report{Results: []Result{
		{Rule: Rule{ID: "a", Statement: "A holds."}, Outcome: Pass, Skipped: []string{"needs writes: would send POST /a"}},
		{Rule: Rule{ID: "b", Statement: "B holds."}, Outcome: Fail, Detail: "b1 broke (and 4 more)",
			Evidence: []Exchange{{Request: "GET /b1"}, {Request: "GET /b2"}, {Request: "GET /b3"}},
			Findings: []Finding{{"b1 broke", Exchange{Request: "GET /b1"}}, {"b2 broke", Exchange{Request: "GET /b2"}},
				{"b3 broke", Exchange{Request: "GET /b3"}}, {"b4 broke", Exchange{Request: "GET /b4"}}, {"b5 broke", Exchange{Request: "GET /b5", Status: 201}}}},
	}}
	var r recorder
	report(&r, rep)
	if assert.Len(t, r.errors, 1) {
		for i := 1; i <= 5; i++ {
			assert.Contains(t, r.errors[0], fmt.Sprintf("b%d broke\n  > GET /b%d", i, i))
		}
	}
	assert.Equal(t, []string{"conformance rule a: a check skipped: needs writes: would send POST /a"}, r.logs)
}
