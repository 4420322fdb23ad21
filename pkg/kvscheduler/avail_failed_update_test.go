package kvscheduler_test

import (
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Seeds 992 and 7838 of TestRandomGraphs (issue 25, step 3): a derived
// value whose delete failed, then whose update failed. The model says a
// held value satisfies dependencies unless it is on its way out or its
// delete failed; after the failed update it is wanted again and held as
// it was, as after any failed update (the reference, whose read-back
// finds it, makes it available too). d/1 goes through a failed delete
// then a failed update; d/2 through a failed update only. A value that
// depends on each is then requested: both must be created, as the
// southbound holds what they need either way.

func TestFailedUpdateAfterFailedDeleteSatisfiesDependencies(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	// Derived values exist as their base's read derives them (no read of
	// their own), as in the seeds: a read of their own finds d/1 and
	// makes it available already.
	d.Retrieve, d.RetrieveKeys = nil, nil
	x := sb.Descriptor("x", "x/")
	x.Dependencies = func(k string, _ any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{{Label: "d", Key: "d/" + k[len("x/"):]}}
	}
	register(t, s, b, d, x)
	mustSet(t, s, "b/1", "v@1", "b/2", "v@2")

	sb.FailNext("delete", "d/1", errors.New("boom"))
	if err := set(t, s, "b/1", "v"); err == nil {
		t.Fatal("the delete of d/1 failed, Commit returned nil")
	}
	sb.FailNext("update", "d/1", errors.New("boom"))
	sb.FailNext("update", "d/2", errors.New("boom"))
	if err := set(t, s, "b/1", "w@1", "b/2", "w@2"); err == nil {
		t.Fatal("the updates of d/1 and d/2 failed, Commit returned nil")
	}
	if got := sb.Values(); got["d/1"] != "v@1" || got["d/2"] != "v@2" {
		t.Fatalf("the failed updates left the southbound %v, want d/1 = v@1 and d/2 = v@2", got)
	}

	sb.ResetOps()
	err := set(t, s, "x/1", "x", "x/2", "x")
	got := sb.Values()
	for _, k := range []string{"x/1", "x/2"} {
		if got[k] != "x" {
			t.Errorf("%s depends on %s, which the southbound holds (FAILED on an update): %s is %s, not created (Commit %v, ops %v, southbound %v)",
				k, "d/"+k[2:], k, advState(s, k), err, sb.OpStrings(), got)
		}
	}
}
