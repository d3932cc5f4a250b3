package conformance

import (
	"strings"
	"testing"
)

// Test runs Run against the server at baseURL inside a Go test, with opts (at most one;
// none: the zero Options): each rule that fails is reported with t.Errorf, with every finding
// and its evidence, and each skip, and each check skipped, with t.Logf. It returns the report
// for further checks.
//
//	func TestConformance(t *testing.T) {
//		srv := httptest.NewServer(myAPI())
//		defer srv.Close()
//		conformance.Test(t, srv.URL, conformance.Options{Writes: true})
//	}
func Test(t testing.TB, baseURL string, opts ...Options) *Report {
	t.Helper()
	var o Options
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		t.Fatalf("conformance.Test: %d Options given, want at most one", len(opts))
		return nil
	}
	rep, err := Run(t.Context(), baseURL, o)
	if err != nil {
		t.Fatal(err)
		return nil
	}
	report(t, rep)
	return rep
}

// reporter is the part of testing.TB that report uses.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

func report(t reporter, rep *Report) {
	t.Helper()
	for _, res := range rep.Results {
		switch res.Outcome {
		case Fail:
			t.Errorf("conformance rule %s failed: %s\n  (%s)\n%s", res.ID, res.Detail, res.Statement,
				indent(findingsText(res)))
		case Skip:
			t.Logf("conformance rule %s skipped: %s", res.ID, res.Detail)
		}
		for _, s := range res.skips() {
			if res.Outcome != Skip || s != res.Detail {
				t.Logf("conformance rule %s: a check skipped: %s", res.ID, s)
			}
		}
	}
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
