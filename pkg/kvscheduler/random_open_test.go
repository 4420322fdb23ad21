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

// TestRandomOpen443352_CycleRetryThrashes (seed 443352 of 400,001-600,000;
// it failed before issue 25's fixes too): a/g0/0, a/g1/5, a/g0/6 and
// a/g0/4 form a cycle, a/g0/0 and a/g0/2 also depend on any a/g0/ key
// (themselves included). a/g0/0's create fails; its retry created and
// deleted the members in turn (a/g0/4 created, then a/g0/0 re-checked for
// it, an a/g0/ key, and taken down with a/g0/4 before a/g0/6, which
// a/g0/4 made ready, was created), many times in one transaction, and the
// retries settled with a/g0/2, a/g0/4, a/g0/6 and a/g1/5 missing
// ("settled/missing-self"). A value that comes re-checks only the values
// it may make ready (walker.availChanged).
func TestRandomOpen443352_CycleRetryThrashes(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/5", &rval{Ver: 0, Deps: []string{"a/g0/6"}}}}},
		{Set: []rset{{"a/g0/6", &rval{Ver: 0, Deps: []string{"a/g0/4"}}}, {"a/g0/4", &rval{Ver: 0, Deps: []string{"a/g0/0"}}}}},
		{Fail: []rfail{{"create", "a/g0/0"}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0, Deps: []string{"a/g1/5", "any:a/g0/"}}}, {"a/g0/2", &rval{Ver: 0, Deps: []string{"a/g0/6", "any:a/g0/"}}}}},
	}})
}

// TestRandomOpen629585_ReleasedDeleteAppliesTheEarlierRequest (seed
// 629585 of 600,001-800,000; it passed before 90ba91f, which fixed an
// order violation, seed 241994): in a full resync, a/g0/0's update
// releases a/g1/3's delete (it waited for a/g0/0); the release applies
// a/g1/3's request from before the resync (an update that fails, injected
// earlier), and the resync's own request for a/g1/3, further on, was then
// not applied: the value had failed in the transaction. Its retry took it
// down and the retries settled without it ("settled/missing"). Leaving the
// release to the later request is what TestRandomRepro25IGuard guards
// against; instead, a failure of the request a release applied does not
// stop the transaction's own, different, request (walker.otherRequest).
func TestRandomOpen629585_ReleasedDeleteAppliesTheEarlierRequest(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Resync: kvscheduler.DownstreamResync, Fail: []rfail{{"update", "a/g1/3"}}},
		{Fail: []rfail{{"update", "a/g0/0"}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0, Deps: []string{"any:a/g1/"}}}, {"a/g0/4", &rval{Ver: 0}}}},
		{Set: []rset{{"a/g1/3", &rval{Ver: 0, Deps: []string{"a/g0/4"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0}}, {"a/g0/4", &rval{Ver: 0, Deps: []string{"a/g1/1"}}}, {"a/g1/3", &rval{Ver: 1, Deps: []string{"a/g0/4"}}}}},
		{Resync: kvscheduler.FullResync, Set: []rset{{"a/g1/3", &rval{Ver: 0}}, {"a/g0/4", &rval{Ver: 0, Deps: []string{"d/g1/1/1"}}}}},
	}})
}
