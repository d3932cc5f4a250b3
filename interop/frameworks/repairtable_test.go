package frameworks

import (
	"fmt"
	"slices"
	"strings"
)

// repairTable renders the suite's measure, one row per framework and a total: of the
// lossless cases, how many the server refused as the caller sent them (the others it took as
// they were, coercing them itself) and how many of those the client repaired, without and with
// the schema; the requests the server received per repair; the lossy cases that stopped with a
// proposal naming the bound; the unrepairable ones that stopped with nothing created; the
// rate limit; and harm (see judge).
func repairTable(rows []repairRow) string {
	var b strings.Builder
	b.WriteString("| framework | lossless cases refused as sent | repaired: without schema (failure states field and fix) / schema, after the answer / schema, checked before sending | requests per repair (same order) | lossy: stopped with a proposal naming the bound (same order) | unrepairable: stopped, nothing created | rate limit | harm |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	var total tally
	for _, row := range rows {
		var n tally
		n.add(row)
		total.merge(n)
		limit := row.rateLimit
		if limit == "" {
			limit = "–"
		}
		b.WriteString(n.line(row.framework, limit))
	}
	if len(rows) > 1 {
		b.WriteString(total.line("**all**", ""))
	}
	return b.String()
}

// tally counts one framework's results (or all of them).
type tally struct {
	lossless, refused, stated    int
	repaired, requests           [3]int // by mode, in the order of modes
	lossy, bound                 [3]int
	unrepairable, stoppedCleanly int
	harm                         int
}

func modeIndex(mode string) int { return slices.Index(modes, mode) }

func (n *tally) add(row repairRow) {
	refused := map[string]bool{} // by case: the server refused the caller's arguments as sent
	for _, r := range row.results {
		if r.mode == withoutSchema && r.c.kind == lossless {
			n.lossless++
			if !r.acceptedAsSent {
				refused[r.c.name] = true
				n.refused++
				if r.states {
					n.stated++
				}
			}
		}
	}
	for _, r := range row.results {
		m := modeIndex(r.mode)
		n.harm += len(r.harm)
		switch r.c.kind {
		case lossless:
			if refused[r.c.name] && r.recovered {
				n.repaired[m]++
				n.requests[m] += len(r.reqs)
			}
		case lossy:
			n.lossy[m]++
			if r.namesBound {
				n.bound[m]++
			}
		case unrepairable:
			n.unrepairable++
			if r.err != nil && r.created == 0 {
				n.stoppedCleanly++
			}
		}
	}
}

func (n *tally) merge(o tally) {
	n.lossless += o.lossless
	n.refused += o.refused
	n.stated += o.stated
	n.unrepairable += o.unrepairable
	n.stoppedCleanly += o.stoppedCleanly
	n.harm += o.harm
	for m := range modes {
		n.repaired[m] += o.repaired[m]
		n.requests[m] += o.requests[m]
		n.lossy[m] += o.lossy[m]
		n.bound[m] += o.bound[m]
	}
}

func (n tally) line(name, limit string) string {
	perRepair := func(m int) string {
		if n.repaired[m] == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f", float64(n.requests[m])/float64(n.repaired[m]))
	}
	return fmt.Sprintf("| %s | %d of %d | %d (%d) / %d / %d of %d | %s / %s / %s | %d / %d / %d of %d | %d of %d | %s | %d |\n",
		name, n.refused, n.lossless,
		n.repaired[0], n.stated, n.repaired[1], n.repaired[2], n.refused,
		perRepair(0), perRepair(1), perRepair(2),
		n.bound[0], n.bound[1], n.bound[2], n.lossy[0],
		n.stoppedCleanly, n.unrepairable,
		limit, n.harm)
}
