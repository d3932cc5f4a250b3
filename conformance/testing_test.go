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
