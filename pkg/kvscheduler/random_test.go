package kvscheduler_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestRandomGraphs is rule 11 of issue 13: random graphs and transactions
// with injected (transient) southbound failures and unlimited retries on a
// fake clock. The rules it checks, precisely:
//
//  1. Settled state. After every timer of a retry has fired and its
//     retry transaction was processed (and until none is armed any more),
//     the southbound holds exactly wantSouthbound(desired): the desired base
//     values and their derived values (with their content) in the greatest
//     fixed point of "a base value exists iff each of its dependencies is
//     met by an existing key (exact key, or any key with the AnyOf prefix),
//     a derived value or property exists iff its base exists".
//  2. Order, checked at every descriptor call against the southbound's
//     content at that moment (its keys plus the properties of the base
//     values it holds, as stored there):
//     - Create or Update of a base value: every dependency of the value
//     being written is met, except a dependency that can be satisfied by a
//     key of the written value's own strongly connected component (the
//     reference creates a whole SCC at once). The graph of the SCC has an
//     edge from each base value to every key that can satisfy one of its
//     dependencies and from each derived value/property to its base, over
//     the union of the desired values, the values in the southbound and
//     the value being written.
//     - Create or Update of a derived value: its base is in the southbound.
//     - Delete of k: no other value in the southbound is derived from k,
//     and no base value in the southbound (with the dependencies of the
//     value stored there) has a dependency that is met now and would not
//     be without k (and k's properties), unless it is in k's SCC.
//  3. After every transaction (NB transactions and each round of retries),
//     every key in the southbound is in mostSouthbound(desired) or was
//     left there by a delete or an update that failed (in the southbound,
//     or refused by the scheduler for a property still needed; and it was not
//     written since; its retry deletes or changes it), or is a dependency
//     (transitively) of such a value still in the southbound: deleting
//     those would break rule 2. A value left by a failed update (with its
//     derived values) is there as it was and satisfies dependencies, so
//     the fixed point counts it as existing; one left by a failed delete
//     does not (rule 5 of issue 13).
//  4. No failure reported for nothing: a delete the scheduler refused
//     because a value depending on it still existed is not reported
//     failed when the same transaction then deleted it (it was in the
//     southbound before the transaction and is not after: a value the
//     southbound lost before is not deleted by it), unless the
//     refusal follows from a real failure (one injected in the
//     transaction, a value that had failed before it, or a refusal of the
//     dependent in turn). Such a report made a transaction with revert
//     revert.
//
// Issue 25's paths are drawn on top (random_ext_test.go): a descriptor
// claiming its derived keys (with a Retrieve of base values only, or of
// derived values too), downstream resyncs scoped to some keys, base
// values the southbound loses behind the scheduler's back (the order
// checks count them as present until the scheduler reads them back; a
// downstream resync repairs what is still lost before the retries
// settle), and southbound notifications: the southbound's own values
// "s/<i>" appearing and going (desired values depend on them), and
// derived keys notified as the southbound holds them (ignored); and, for
// half the seeds, ordering-only dependencies (random_ordering_test.go):
// rule 1 then holds between the least (they count) and the most (they do
// not) southbound, a create waits for them but an update or a re-create
// does not, a delete is not held back by them, and within one
// transaction a value the transaction deletes is deleted before what it
// is ordered after.
//
// Failures are shrunk to a minimal scenario printed as Go to paste into a
// unit test. -kvseeds=N runs N seeds (default 500, about 1 s when they pass) from
// -kvfrom=F (default 1); -kvseed=S runs only seed S.
func TestRandomGraphs(t *testing.T) {
	if *kvSeed != 0 {
		checkSeed(t, *kvSeed)
		return
	}
	// One shrunk reproducer per class of failure.
	seen := map[string]int{}
	var failing []string
	for seed := *kvFrom; seed < *kvFrom+uint64(*kvSeeds); seed++ {
		sc := genScenario(rand.New(rand.NewPCG(seed, 13)))
		extendScenario(rand.New(rand.NewPCG(seed, 25)), &sc)
		extendNotifications(rand.New(rand.NewPCG(seed, 26)), &sc)
		extendOrdering(rand.New(rand.NewPCG(seed, 27)), &sc)
		f := runScenario(sc)
		if f == nil {
			continue
		}
		failing = append(failing, fmt.Sprintf("%d (%s)", seed, f.kind))
		if seen[f.kind]++; seen[f.kind] == 1 {
			reportFailure(t, seed, sc, f)
		}
	}
	if len(seen) > 0 {
		t.Logf("failing seeds per class (of %d): %v; seeds: %s", *kvSeeds, seen, strings.Join(failing, ", "))
	}
}

// depClass names the kind of a dependency in failure classes.
func depClass(d string) string {
	if ordering(d) {
		return "ordering-" + depClass(depKey(d))
	}
	switch {
	case strings.HasPrefix(d, "any:"):
		return "anyof"
	case strings.HasPrefix(d, "d/"):
		return "derived"
	case strings.HasPrefix(d, "p/"):
		return "property"
	}
	return "exact"
}

var (
	kvSeeds = flag.Int("kvseeds", 500, "number of seeds of TestRandomGraphs")
	kvSeed  = flag.Uint64("kvseed", 0, "run only this seed of TestRandomGraphs")
	kvFrom  = flag.Uint64("kvfrom", 1, "first seed of TestRandomGraphs (with -kvseeds)")
	// -kvignore=order-derived,extra hides classes of failures already
	// known, to look for the ones they mask.
	kvIgnore  = flag.String("kvignore", "", "comma-separated failure classes TestRandomGraphs does not report")
	kvHistory = flag.Bool("kvhistory", false, "print the scheduler's transaction records with a failure")
)

func ignored(kind string) bool {
	for _, k := range strings.Split(*kvIgnore, ",") {
		if k != "" && (k == kind || strings.HasSuffix(k, "*") && strings.HasPrefix(kind, strings.TrimSuffix(k, "*"))) {
			return true
		}
	}
	return false
}

func checkSeed(t *testing.T, seed uint64) {
	sc := genScenario(rand.New(rand.NewPCG(seed, 13)))
	extendScenario(rand.New(rand.NewPCG(seed, 25)), &sc)
	extendNotifications(rand.New(rand.NewPCG(seed, 26)), &sc)
	extendOrdering(rand.New(rand.NewPCG(seed, 27)), &sc)
	if f := runScenario(sc); f != nil {
		reportFailure(t, seed, sc, f)
	}
}

func reportFailure(t *testing.T, seed uint64, sc scenario, f *propFailure) {
	t.Helper()
	min, mf := shrink(sc, f)
	t.Errorf("seed %d: %s\nminimal reproducer (fails with: %s):\n%s", seed, f, mf, formatScenario(min))
}

// checkScenario runs one scenario as a unit test (for reproducers).
func checkScenario(t *testing.T, sc scenario) {
	t.Helper()
	if f := runScenario(sc); f != nil {
		t.Fatal(f)
	}
}

type rset struct {
	Key string
	Val *rval // nil deletes
}

// rfail injects one failure of the next Op ("create", "update", "delete")
// on Key, before the transaction.
type rfail struct{ Op, Key string }

// rtxn is one transaction. A FullResync or an UpstreamResync sends the
// whole desired state after applying Set to it; a DownstreamResync ignores
// Set.
type rtxn struct {
	Resync kvscheduler.ResyncType
	// Keys scope a DownstreamResync (WithResyncKeys).
	Keys []string
	// Lose are base values the southbound loses behind the scheduler's
	// back before the transaction, with their derived values.
	Lose []string
	// Notify are southbound notifications pushed before the transaction
	// (see harness.notify).
	Notify []rnotify
	Fail   []rfail
	Set    []rset
}

type scenario struct {
	NoUpdate          bool // the base descriptor re-creates on every change
	NoDerivedRetrieve bool // descriptor "d" has no Retrieve (the reference's contract)
	// ClaimDerived: descriptor "a" claims the "d/" keys too (the
	// reference's usual setup) and "d" is not registered; its Retrieve
	// returns base values only, or with RetrieveDerived the derived
	// values too.
	ClaimDerived    bool
	RetrieveDerived bool
	Txns            []rtxn
}

type propFailure struct {
	kind string // the class: order-create, order-delete, extra, settled, ...
	msg  string
	step string
	ops  string // the southbound operations of the failing step
}

func (f *propFailure) String() string {
	s := fmt.Sprintf("[%s] %s: %s", f.kind, f.step, f.msg)
	if f.ops != "" {
		s += " (operations of " + f.step + ": " + f.ops + ")"
	}
	return s
}
