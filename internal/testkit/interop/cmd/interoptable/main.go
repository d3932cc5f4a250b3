// Command interoptable writes the README's interoperability table from the rows the
// interoperability tests recorded (internal/testkit/interop), or checks that the README holds it.
//
//	REMEDY_INTEROP_OUT=/tmp/interop go test ./... && (cd interop/mcpgo && REMEDY_INTEROP_OUT=/tmp/interop go test ./...)
//	go run ./internal/testkit/interop/cmd/interoptable -rows /tmp/interop -write README.md
//
// With -check instead of -write it changes nothing and exits 1 when the README's table differs
// from the one the rows give (CI runs it after the tests), printing the table it expected.
// A row with a failed check is an error either way: the table says what passed.
//
// With -repair it does the same, in the same file, for the repair table that
// interop/frameworks' TestRepair measured and wrote to DIR/repair.md (between the README's
// repair-table markers); a DIR without it is an error (the test did not run, or failed).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/remedy-go/remedy/internal/testkit/interop"
)

func main() {
	rows := flag.String("rows", "", "the `DIR` the tests wrote rows.jsonl to ("+interop.OutEnv+")")
	write := flag.String("write", "", "write the table into the `FILE`'s marked section")
	check := flag.String("check", "", "exit 1 when the `FILE`'s marked section is not the table")
	repair := flag.Bool("repair", false, "the repair table too (DIR/"+interop.RepairFile+", between its own markers)")
	flag.Parse()
	if *rows == "" || (*write == "") == (*check == "") {
		fmt.Fprintln(os.Stderr, "usage: interoptable -rows DIR (-write FILE | -check FILE)")
		os.Exit(2)
	}
	if err := run(*rows, *write, *check, *repair); err != nil {
		fmt.Fprintln(os.Stderr, "interoptable:", err)
		os.Exit(1)
	}
}

func run(dir, write, check string, repair bool) error {
	rows, err := interop.ReadRows(dir)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s: no rows: did the interoperability tests run with %s set?", dir, interop.OutEnv)
	}
	for _, r := range rows {
		if r.Failed > 0 {
			return fmt.Errorf("%s (%s, %s): %d of %d checks failed", r.Peer, r.Role, r.Transport, r.Failed, r.Passed+r.Failed+r.Skipped)
		}
	}
	table := interop.Table(rows)
	file := write + check
	doc, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	want, err := interop.Splice(string(doc), table)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	repairTable := ""
	if repair {
		b, err := os.ReadFile(filepath.Join(dir, interop.RepairFile))
		if err != nil {
			return fmt.Errorf("%w: did interop/frameworks' TestRepair run, and pass, with %s set?", err, interop.OutEnv)
		}
		repairTable = string(b)
		if want, err = interop.SpliceRepair(want, repairTable); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	if write != "" {
		return os.WriteFile(write, []byte(want), 0o644)
	}
	if want != string(doc) {
		flags := "-rows DIR"
		if repair {
			flags += " -repair"
		}
		return fmt.Errorf("%s: the interoperability table (or the repair table) is not what CI ran; run go run ./internal/testkit/interop/cmd/interoptable %s -write %s after the tests, with %s=DIR. The table CI ran:\n%s",
			check, flags, check, interop.OutEnv, table+repairTable)
	}
	return nil
}
