package main

import (
	"context"
	"io"
	"os"

	"github.com/remedy-go/remedy/conformance"
)

var lintCommand = &command{
	name:     "lint",
	summary:  "check an OpenAPI document for what agents need, without a server",
	synopsis: "remedy lint [--json] [--junit FILE] [--verbose] openapi.json",
	about: `Lint checks an OpenAPI document (JSON) alone, rule by rule: what a client needs
from it to call the API and to repair its failures. "-" reads the document from
stdin. It prints one line per rule, then why each failure failed.`,
	examples: []string{
		"remedy lint openapi.json",
		"curl -s http://127.0.0.1:8080/openapi.json | remedy lint --junit lint.xml -",
	},
	exits: `0 no rule failed
1 a rule failed (a document that is not OpenAPI 3.x included)
2 usage error
3 the file could not be read, or the JUnit report written`,
	more: func() string { return ruleList("Rules", conformance.LintRules()) },
	run:  lint,
}

func lint(_ context.Context, in *invocation) error {
	var report reportFlags
	report.define(in.fs)
	pos, err := in.parse(1, 1)
	if err != nil {
		return err
	}
	name := pos[0]
	var doc []byte
	if name == "-" {
		name = "stdin"
		doc, err = io.ReadAll(in.stdin)
	} else {
		doc, err = os.ReadFile(name)
	}
	if err != nil {
		return cannotRunf("lint: cannot read %s: %v", name, err)
	}
	rep := conformance.Lint(doc)
	rep.Target = name
	return report.write(in, rep)
}
