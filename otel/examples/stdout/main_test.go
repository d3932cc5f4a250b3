package main

import (
	"strings"
	"testing"
)

// The example runs offline and prints the call's spans, the server's under its attempts, and
// the metrics.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`report: 200 {"revenue":1200} after 2 attempts`,
		`"Name": "report"`, `"Name": "GET /v1/report"`,
		`"Value": "retry"`, `"Name": "remedy.client.attempts"`, `"Name": "remedy.server.refusals"`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output has no %s:\n%s", want, out.String())
		}
	}
}
