package kvscheduler_test

import (
	"os"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// openDefect skips a test that proves a known defect not fixed yet (each
// is listed in docs/safety.md, "Not yet guaranteed"), unless the
// environment sets LARIAT_OPEN_DEFECTS: the test stays in the repository,
// failing on the current code, for whoever fixes the defect to run.
func openDefect(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("LARIAT_OPEN_DEFECTS") == "" {
		t.Skipf("open defect: %s (docs/safety.md, Not yet guaranteed); LARIAT_OPEN_DEFECTS=1 runs it", what)
	}
}

// TestRandomOpen310458_RetriesNeverSettle (seed 310458 of 300,001-400,000,
// the one seed of 400,000 that still fails; it failed before issue 25's
// fixes too): a/g0/2's delete fails while a/g0/6 and a/g0/4 (through
// a/g0/2's property) still need it, in a cycle through a/g1/1; the
// retries never settle ("[settle] retry round 100: retries still armed
// after 100 rounds").
func TestRandomOpen310458_RetriesNeverSettle(t *testing.T) {
	openDefect(t, "kvscheduler: retries of a failed delete in a cycle through a property never settle (seed 310458)")
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Ver: 0, Deps: []string{"a/g0/4", "a/g0/2"}}}}},
		{Set: []rset{{"a/g1/5", &rval{Ver: 0, Props: []int{0}}}}},
		{Set: []rset{{"a/g0/4", &rval{Ver: 0, Deps: []string{"any:p/"}, Props: []int{0}}}}},
		{Set: []rset{{"a/g1/5", &rval{Ver: 0}}}},
		{Resync: kvscheduler.DownstreamResync, Fail: []rfail{{"delete", "a/g0/2"}}},
		{Set: []rset{
			{"a/g0/2", &rval{Ver: 0, Deps: []string{"a/g0/6", "any:p/"}, Props: []int{0}}},
			{"a/g0/6", &rval{Ver: 0, Deps: []string{"a/g1/1"}}},
			{"a/g0/4", &rval{Ver: 0, Deps: []string{"d/g0/0/1"}}},
		}},
	}})
}
