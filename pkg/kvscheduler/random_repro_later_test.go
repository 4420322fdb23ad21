package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// The minimal reproducers TestRandomGraphs found on the rewritten scheduler
// in the larger runs of seeds that followed the first 3,000
// (random_repro_test.go has those): each failed until the commit that
// names the seed, except the guards of the model, which say so.

// TestRandomReproSeed4796: a value being updated that went PENDING
// meanwhile (its new value's dependencies unmet) was judged by its new
// value for what must not be deleted under it, though its old value, which
// needs a/g0/2, was still in the southbound: a/g0/2 was deleted first.
func TestRandomReproSeed4796(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{}}}},
		{Fail: []rfail{{"update", "a/g0/2"}}, Set: []rset{{"a/g0/0", &rval{}}, {"a/g0/2", &rval{Deps: []string{"a/g0/0"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Deps: []string{"a/g0/2"}, Props: []int{0}}}}},
		{Set: []rset{{"a/g0/2", &rval{}}, {"a/g0/0", &rval{Deps: []string{"any:p/"}}}}},
	}})
}

// TestRandomReproSeed7931: a value whose update turned into a delete into
// PENDING (a/g0/0: its obsolete derived value took a/g1/1, a/g0/2 and
// a/g0/4, which its new value needs, down) and whose delete then waited
// for a dependent (a/g1/3, whose delete failed) was still taken for being
// updated: its new value's dependency a/g0/4 was kept for it, and with it
// a/g0/2, which nothing desired needs.
func TestRandomReproSeed7931(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g1/3"}}, Set: []rset{{"a/g0/0", &rval{Derived: []int{1}}}, {"a/g1/1", &rval{Deps: []string{"d/g0/0/1"}}}}},
		{Set: []rset{{"a/g1/3", &rval{Deps: []string{"a/g0/0"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Deps: []string{"a/g1/1"}, Derived: []int{1}}}}},
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"a/g0/2"}}}, {"a/g0/2", &rval{Deps: []string{"a/g1/1"}}}, {"a/g0/0", &rval{Deps: []string{"a/g0/4"}}}}},
	}})
}

// TestRandomReproSeed5420: in a retry, a base not re-applied yet was
// counted on, as a member of a cycle, with the value it had failed with
// (not its latest request): a/g0/2 was re-created before a/g1/1, which it
// now needs, with a/g1/1 created after it as the old partner, and both
// went again (seeds 5912 and 8560 too).
func TestRandomReproSeed5420(t *testing.T) {
	checkScenario(t, scenario{NoUpdate: true, Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g1/1"}}, Set: []rset{{"a/g0/2", &rval{}}, {"a/g1/1", &rval{Deps: []string{"a/g0/2"}}}}},
		{Set: []rset{{"a/g0/2", &rval{Deps: []string{"a/g1/1"}}}, {"a/g1/1", &rval{}}}},
	}})
}

// TestRandomReproSeed4288: whether a dependent is in a cycle with the value
// being deleted followed the base of a derived value that was no longer in
// the southbound, and that base's wanted (PENDING) dependencies: d/g0/0/1
// was deleted while a/g1/3, which needs it, was still there, taken for a
// member of a cycle through a/g0/0, which does not exist.
func TestRandomReproSeed4288(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g1/1"}}, Set: []rset{{"a/g0/0", &rval{Derived: []int{1}}}}},
		{Set: []rset{{"a/g1/5", &rval{Deps: []string{"a/g1/3"}}}, {"a/g1/1", &rval{Deps: []string{"a/g1/5", "any:d/g0/"}}}, {"a/g1/3", &rval{Deps: []string{"any:d/g0/"}}}}},
		{Set: []rset{{"a/g0/0", &rval{}}}},
		{Set: []rset{{"a/g1/5", &rval{Ver: 1, Deps: []string{"a/g1/3"}}}, {"a/g0/0", &rval{Deps: []string{"a/g1/3"}}}}},
	}})
}

// TestRandomReproSeed6214: a guard of the model (the scheduler was right):
// a derived value with a descriptor is in the southbound on its own, not
// because its base is. The model counted d/g0/2/1 as present with a/g0/2
// after its delete, and took the delete of a/g0/2 for one under a/g1/1,
// whose any-of dependency on d/g0/ it believed a/g0/2 met.
func TestRandomReproSeed6214(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"p/g1/3/0"}, Derived: []int{1}}}, {"a/g1/1", &rval{Deps: []string{"any:d/g0/"}, Derived: []int{1}}}}},
		{Fail: []rfail{{"delete", "d/g1/1/1"}}, Set: []rset{{"a/g1/3", &rval{Deps: []string{"a/g0/2", "any:d/g1/"}, Props: []int{0}}}}},
		{Set: []rset{{"a/g0/2", &rval{Derived: []int{1}}}}},
		{Set: []rset{{"a/g0/2", nil}}},
	}})
}

// TestRandomReproSeed5885: a derived value whose create failed, and whose
// base then went PENDING and came back without it, was retried on its own
// with its old value: created with no base deriving it, and a/g0/2, which
// needs it, with it.
func TestRandomReproSeed5885(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"create", "d/g0/0/0"}}, Set: []rset{{"a/g0/2", &rval{}}}},
		{Set: []rset{{"a/g0/2", &rval{Deps: []string{"d/g0/0/0"}}}, {"a/g0/0", &rval{Deps: []string{"a/g0/2"}, Derived: []int{0}}}}},
		{Set: []rset{{"a/g0/0", &rval{}}}},
	}})
}

// TestRandomReproSeed4689: a downstream resync read back a derived value
// whose delete had failed (its base no longer derives it) and made it
// available, as if the resync wanted it again: a/g0/4, which depends on
// it, was created on it, and a/g1/3 on a/g0/4, though nothing wants it.
func TestRandomReproSeed4689(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "d/g1/3/0"}}, Set: []rset{{"a/g0/4", &rval{}}, {"a/g1/3", &rval{Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/3", &rval{Deps: []string{"any:a/g0/"}, Derived: []int{1}}}}},
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"d/g1/3/0"}}}}},
		{Resync: kvscheduler.DownstreamResync},
	}})
}

// TestRandomReproSeed7624: a value deleted into PENDING (a/g0/0, which needs
// itself and a/g1/1) stayed PENDING although a/g1/1 was created again
// while its delete was under way: nothing checked it again.
func TestRandomReproSeed7624(t *testing.T) {
	checkScenario(t, scenario{NoUpdate: true, Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g0/0"}}, Set: []rset{{"a/g0/0", &rval{Deps: []string{"a/g0/0", "a/g1/1"}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g0/0"}}}}},
		{Set: []rset{{"a/g1/1", &rval{}}}},
	}})
}

// TestRandomReproSeed12576 (no failures injected): a value created as a
// member of a cycle (a/g1/5, needing a/g0/4 and a/g0/0) was taken for no
// longer ready once it existed: a/g0/4, which needs a/g1/5 and itself,
// waited only for itself, since a/g1/5 existed, so the two were no cycle
// of waiting values any more; a/g1/5 was deleted, created again, and so on
// until the walk's bound.
func TestRandomReproSeed12576(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"a/g1/5", "a/g0/4"}}}}},
		{Set: []rset{{"a/g0/0", &rval{Deps: []string{"a/g1/5"}}}}},
		{Set: []rset{{"a/g1/5", &rval{Deps: []string{"a/g0/4", "a/g0/0"}}}}},
	}})
}

// TestRandomReproSeed28173: a derived value left over by a failed delete
// whose base then went (and its node with it) was not retried after its
// retry failed again: its retry options were looked up on the base's node
// only (seeds 34004 and 48058 of -kvseeds=50000 too).
func TestRandomReproSeed28173(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "d/g1/3/0"}, {"delete", "d/g1/3/0"}}, Set: []rset{{"a/g1/3", &rval{Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/3", &rval{}}}},
		{Set: []rset{{"a/g1/3", nil}}},
	}})
}

// TestRandomReproSeed33167 (seed 33167 of -kvseeds=50000): a value whose
// update failed (a/g0/2: the southbound kept its old value, which needs
// nothing) was judged by the dependencies of its failed request (any
// d/g0/) when its base a/g0/0's update took the obsolete d/g0/0/0 away: it
// was deleted into PENDING while a/g0/0's old value, which needs it, was
// still in the southbound. Deletes follow the dependencies that exist.
func TestRandomReproSeed33167(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/2", &rval{}}}},
		{Fail: []rfail{{"update", "a/g0/2"}}, Set: []rset{{"a/g0/2", &rval{Deps: []string{"any:d/g0/"}}}, {"a/g0/0", &rval{Deps: []string{"a/g0/2"}, Derived: []int{0}}}}},
		{Set: []rset{{"a/g0/0", &rval{}}, {"a/g0/2", &rval{}}}},
	}})
}

// TestRandomReproSeed22884 (seed 22884 of -kvseeds=50000): a downstream
// resync made a/g0/0, whose delete had failed, available again; a/g1/3 and
// a/g0/2 were created as members of a cycle counting on a/g1/1, which
// counted on a/g0/0. a/g0/0 then went (its wanted value's dependencies are
// unmet) before a/g1/1 could be created, and the two members stayed in
// the southbound without a/g1/1.
func TestRandomReproSeed22884(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/0", &rval{}}}},
		{Fail: []rfail{{"delete", "a/g0/0"}}, Set: []rset{
			{"a/g1/1", &rval{Deps: []string{"a/g0/2", "a/g0/0"}}},
			{"a/g0/2", &rval{Deps: []string{"a/g1/3"}}},
			{"a/g1/3", &rval{Deps: []string{"a/g1/1"}}},
			{"a/g0/0", &rval{Deps: []string{"d/g0/0/1", "any:a/g0/"}}},
		}},
		{Resync: kvscheduler.DownstreamResync},
	}})
}

// TestRandomReproSeed28574: a guard of the model (the scheduler was
// right): an update the scheduler refuses itself leaves the value in the
// southbound as a failed update does. a/g1/1's update was refused (its
// property p/g1/1/0 is still needed by a/g0/4, whose own failed update
// left a value needing any property); a/g1/1 stays with its old value and
// its derived d/g1/1/0, which the model took for extra once a/g1/5, which
// only the refused value needs, went (seed 37335 too).
func TestRandomReproSeed28574(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"update", "a/g0/4"}}, Set: []rset{{"a/g0/4", &rval{Deps: []string{"any:p/"}}}}},
		{Set: []rset{{"a/g1/1", &rval{Derived: []int{0}, Props: []int{0}}}}},
		{Set: []rset{{"a/g0/4", &rval{}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g1/5"}, Derived: []int{0}}}, {"a/g1/5", &rval{}}}},
		{Set: []rset{{"a/g1/5", nil}}},
	}})
}

// TestRandomReproSeed37335: the same guard: a/g0/2's refused update (its
// property is still needed by a/g1/1, whose delete failed) leaves its old
// value, on which a/g0/4 stays, though a/g1/3, which only the refused
// value needs, went.
func TestRandomReproSeed37335(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g1/1"}}, Set: []rset{{"a/g1/1", &rval{Deps: []string{"any:p/"}}}, {"a/g1/3", &rval{}}}},
		{Set: []rset{{"a/g0/2", &rval{Props: []int{0}}}, {"a/g0/4", &rval{Deps: []string{"a/g0/2"}}}}},
		{Set: []rset{{"a/g0/2", &rval{Deps: []string{"a/g1/3"}}}}},
		{Set: []rset{{"a/g1/3", nil}}},
	}})
}

// TestRandomReproSeed18227: whether a dependent is in a cycle with the
// value being deleted followed, from a derived value left over by a failed
// delete (d/g1/1/0, which a/g1/1 no longer derives), its old base: a/g1/1
// needs a/g0/0, which needs any a/g1/, a/g1/3 among them, and a/g1/3 needs
// d/g1/1/0, so d/g1/1/0 was deleted while a/g1/3 was still there. It
// appeared once a transaction requesting a/g1/1 again attempted its
// failed derived value (a3ae92a); seeds 4235 and 11639 too.
func TestRandomReproSeed18227(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "d/g1/3/0"}}, Set: []rset{{"a/g0/0", &rval{Deps: []string{"any:a/g1/"}}}}},
		{Set: []rset{{"a/g1/1", &rval{Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/3", &rval{Deps: []string{"d/g1/1/0"}, Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g0/0"}}}}},
		{Set: []rset{{"a/g1/1", &rval{}}}},
	}})
}

// TestRandomReproSeed4235: the same in a retry, through an any-of
// dependency: d/g1/3/1, left over when a/g1/3 stopped deriving it, was
// deleted while a/g1/1, which needs any d/g1/, was still there.
func TestRandomReproSeed4235(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"any:d/g1/"}}}}},
		{Fail: []rfail{{"update", "a/g1/1"}, {"delete", "a/g1/3"}}, Set: []rset{{"a/g1/3", &rval{Derived: []int{1}}}}},
		{Set: []rset{{"a/g1/3", &rval{Deps: []string{"a/g1/1"}}}, {"a/g1/1", &rval{}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g1/5"}}}}},
	}})
}

// TestRandomReproSeed54039 (no failures injected): with the members of
// cycles created in a transaction checked again at every delete of an
// available value (the first fix for seed 22884), a value deleted while a
// cycle was still being created (a/g0/4, which waited for a/g0/2, not
// created yet) took the members made so far down, the walk created them
// again, and so on: the retry of the delete it left failed ran forever.
// They are now checked once the walk is done.
func TestRandomReproSeed54039(t *testing.T) {
	checkScenario(t, scenario{NoDerivedRetrieve: true, Txns: []rtxn{
		{Set: []rset{{"a/g1/7", &rval{Deps: []string{"a/g1/3"}}}}},
		{Set: []rset{{"a/g1/3", &rval{Deps: []string{"a/g0/2", "a/g0/6"}, Derived: []int{0}}}}},
		{Set: []rset{{"a/g1/1", &rval{Deps: []string{"a/g1/5", "a/g1/7"}}}, {"a/g0/4", &rval{Deps: []string{"a/g0/2", "any:a/g1/"}}}}},
		{Set: []rset{{"a/g1/5", &rval{Deps: []string{"a/g0/4"}}}}},
		{Set: []rset{{"a/g0/6", &rval{Deps: []string{"a/g1/7"}}}, {"a/g0/2", &rval{Deps: []string{"a/g1/1"}}}}},
	}})
}

// TestRandomReproSeed90574: a base was deleted although a value that needs
// its property was still in the southbound: a/g0/4, which needs any
// property, lost p/g0/0/0 with a cycle it is part of, and its own delete
// failed (its derived value's did); a/g1/3's property p/g1/3/0, the last
// one, had been taken for gone when a/g1/3's delete began (p/g0/0/0 still
// existed then), and a/g1/3 went.
func TestRandomReproSeed90574(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "d/g0/4/1"}}, Set: []rset{{"a/g0/0", &rval{Deps: []string{"d/g1/1/0"}, Props: []int{0}}}}},
		{Set: []rset{
			{"a/g1/1", &rval{Deps: []string{"a/g1/3", "any:a/g0/"}, Derived: []int{0}}},
			{"a/g1/3", &rval{Props: []int{0}}},
			{"a/g0/4", &rval{Deps: []string{"any:p/"}, Derived: []int{1}}},
		}},
		{Set: []rset{{"a/g1/3", nil}}},
	}})
}

// TestRandomReproSeed129769: a derived value whose delete waited for a
// dependent to go (d/g0/0/1, for a/g0/6, which waited for a/g1/1) was
// attempted again, and failed again, when its base was requested again
// (a3ae92a): once the base came back deriving it, it was not applied
// again in that transaction, since it had failed in it, and was then
// deleted when a/g0/6 went; a/g0/0 was left without it, for good.
func TestRandomReproSeed129769(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Fail: []rfail{{"delete", "a/g1/1"}}, Set: []rset{{"a/g0/0", &rval{Derived: []int{1}}}}},
		{Set: []rset{{"a/g0/6", &rval{Deps: []string{"d/g0/0/1"}}}}},
		{Set: []rset{{"a/g0/0", &rval{}}, {"a/g1/1", &rval{Deps: []string{"a/g0/6"}}}}},
		{Set: []rset{{"a/g1/1", &rval{}}, {"a/g0/0", &rval{Deps: []string{"a/g1/1"}, Derived: []int{1}}}}},
	}})
}

// TestRandomReproSeed185872: the same as seed 90574 once the property's
// node was gone: a/g0/0's delete, held in the transaction for a/g0/4
// (which needs its property p/g0/0/0, and whose own delete waits for
// a/g0/2), went first in the retry, since the property taken for gone had
// been dropped from the graph and a/g0/0 listed no derived value any more
// (seed 173014 too).
func TestRandomReproSeed185872(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Deps: []string{"any:p/"}}}}},
		{Fail: []rfail{{"delete", "a/g0/2"}}, Set: []rset{{"a/g0/0", &rval{Props: []int{0}}}, {"a/g0/6", &rval{Deps: []string{"a/g0/4", "a/g0/0"}, Props: []int{0}}}}},
		{Set: []rset{{"a/g0/2", &rval{Deps: []string{"a/g0/4"}}}}},
		{Set: []rset{{"a/g0/0", nil}}},
	}})
}
