package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/remedy-go/remedy/internal/testkit/plainapi"
)

// Issue 35, row 14: remedy probe without --writes, acting with credentials, runs none of a
// plain API's operations that change state, and lists the checks it skipped; with --writes
// they run, --json holds every finding the text counts and --verbose prints each one.
func TestProbeWithoutWritesExecutesNothing(t *testing.T) {
	t.Parallel()
	api := plainapi.Start(t)
	creds := "Authorization: Bearer " + plainapi.Token

	r := remedyCmd(t, "", "probe", "--header", creds, api.URL)
	r.wantExit(t, exitFailed) // the read-only operations execute invalid input
	if got := api.Executed(); len(got) != 0 {
		t.Errorf("without --writes the handlers of operations that change state ran %v\n%s", got, r)
	}
	for _, op := range []string{"POST /payments (create_payment)", "POST /emails (send_email)",
		"PUT /orders/{id} (update_order)", "DELETE /orders/{id} (cancel_order)"} {
		re := regexp.MustCompile(`SKIP invalid-input-refused.*: needs Options.Writes \(remedy probe --writes\): would send ` + regexp.QuoteMeta(op))
		if !re.MatchString(r.stdout) {
			r = remedyCmd(t, "", "probe", "--verbose", "--header", creds, api.URL)
			if !re.MatchString(r.stdout) {
				t.Errorf("neither the text nor --verbose lists the skipped checks of %s:\n%s", op, r.stdout)
			}
		}
	}
	if got := api.Executed(); len(got) != 0 {
		t.Errorf("without --writes the handlers of operations that change state ran %v", got)
	}

	text := remedyCmd(t, "", "probe", "--writes", "--header", creds, api.URL)
	text.wantExit(t, exitFailed)
	for _, route := range plainapi.Unsafe {
		if api.Executed()[route] == 0 {
			t.Errorf("--writes ran no check of %s", route)
		}
	}
	js := remedyCmd(t, "", "probe", "--writes", "--json", "--header", creds, api.URL)
	js.wantExit(t, exitFailed)
	verbose := remedyCmd(t, "", "probe", "--writes", "--verbose", "--header", creds, api.URL)
	verbose.wantExit(t, exitFailed)

	var rep struct {
		Results []struct {
			ID       string `json:"id"`
			Outcome  string `json:"outcome"`
			Findings []struct {
				Detail string `json:"detail"`
			} `json:"findings"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &rep); err != nil {
		t.Fatalf("probe --json: %v\n%s", err, js)
	}
	andMore := regexp.MustCompile(`\(and (\d+) more`)
	many := false
	for _, res := range rep.Results {
		if res.Outcome != "fail" {
			continue
		}
		line := ""
		for l := range strings.SplitSeq(text.stdout, "\n") {
			if strings.HasPrefix(l, "FAIL "+res.ID+": ") {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("the text has no paragraph for %s:\n%s", res.ID, text.stdout)
		}
		n := 1
		if m := andMore.FindStringSubmatch(line); m != nil {
			more, _ := strconv.Atoi(m[1])
			n += more
			many = true
			if !strings.Contains(line, "--verbose") {
				t.Errorf("the text does not say how to see the %d findings of %s: %s", n, res.ID, line)
			}
		}
		if len(res.Findings) != n {
			t.Errorf("--json holds %d findings of %s, the text counts %d: %s", len(res.Findings), res.ID, n, line)
		}
		times := map[string]int{}
		for _, f := range res.Findings {
			times[f.Detail]++
		}
		for d, k := range times {
			if got := strings.Count(verbose.stdout, d); got < k {
				t.Errorf("--verbose shows %d of the %d findings of %s %q", got, k, res.ID, d)
			}
		}
	}
	if !many {
		t.Errorf("no rule had more findings than the text shows: the test proves nothing\n%s", text.stdout)
	}
	if m := andMore.FindString(verbose.stdout); m != "" {
		t.Errorf("--verbose counts findings (%q) instead of showing them:\n%s", m, verbose.stdout)
	}
}
