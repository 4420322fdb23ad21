package kvscheduler_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestExhaustiveSmallScope is issue 25's exhaustive small-scope check:
// every graph over a small key space, with every sequence of one to three
// steps after the transaction that requests it, checked against the model
// and the checks of TestRandomGraphs (runScenario: order of every
// operation, the southbound after every transaction, no failure reported
// for nothing, the settled state once the retries ran out).
//
// Graphs: three base keys (a/g0/0, a/g0/1, a/g1/2), each absent or one of
// five values (see exhaustiveValues): a derived value and no dependency;
// an exact dependency on the next key (cyclically: 0 on 1, 1 on 2, 2 on
// 0); a derived value and an exact dependency on the next key's derived
// value; an any-of dependency (a/g0/0 on the southbound's own values
// "s/", the others on "a/g0/", which a/g0/1 matches itself); an
// ordering-only dependency on the next key. That is 6^3 = 216 graphs,
// cycles through exact, derived, any-of and ordering-only dependencies
// included.
//
// Steps (exhaustiveSteps): an NB transaction (a/g0/0 removed, or
// requested again), a full, an upstream, a downstream and a scoped
// (a/g0/1) resync, a notification (s/0 appears, or goes), injected
// failures (of the next delete of a/g0/1 and of its derived value, and of
// the next create of a/g0/0; they hit the steps that follow, or the
// retries), and a loss (the southbound loses a/g0/1 behind the
// scheduler's back; runScenario repairs it with a downstream resync
// before the retries settle). 8 kinds: 8 + 8^2 + 8^3 = 584 sequences of
// one to three steps.
//
// 216 × 584 = 126,144 scenarios, run on every core: 31 to 41 s without
// -race on a two-core machine shared with other tests at a load average
// of 15 to 20 (the 125 graphs without ordering-only dependencies took 7 s
// idle, 42 s with -race). Descriptor "a"
// updates in place, "d" retrieves (the random test draws the other
// setups). A failure is shrunk and printed as TestRandomGraphs prints it.
func TestExhaustiveSmallScope(t *testing.T) {
	graphs := exhaustiveGraphs()
	var seqs [][]int
	for n := 1; n <= 3; n++ {
		seqs = append(seqs, exhaustiveSequences(n)...)
	}
	type job struct {
		g   []*rval
		seq []int
	}
	jobs := make(chan job)
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				sc := exhaustiveScenario(j.g, j.seq)
				if f := runScenario(sc); f != nil {
					min, mf := shrink(sc, f)
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s (steps %s)\nminimal reproducer (fails with: %s):\n%s",
						f, stepNames(j.seq), mf, formatScenario(min)))
					mu.Unlock()
				}
			}
		}()
	}
	for _, g := range graphs {
		for _, seq := range seqs {
			jobs <- job{g, seq}
		}
	}
	close(jobs)
	wg.Wait()
	if len(failed) > 0 {
		t.Errorf("%d of %d scenarios fail; the first:\n%s", len(failed), len(graphs)*len(seqs), failed[0])
	}
}

// exhaustiveKeys are the base keys of the graphs.
var exhaustiveKeys = [3]string{"a/g0/0", "a/g0/1", "a/g1/2"}

// exhaustiveValues returns the values key i may have (nil: absent).
func exhaustiveValues(i int) []*rval {
	next := exhaustiveKeys[(i+1)%3]
	anyOf := "any:a/g0/"
	if i == 0 {
		anyOf = "any:s/"
	}
	return []*rval{
		nil,
		{Derived: []int{0}},
		{Deps: []string{next}},
		{Deps: []string{"d/" + next[2:] + "/0"}, Derived: []int{0}},
		{Deps: []string{anyOf}},
		{Deps: []string{"~" + next}},
	}
}

// exhaustiveGraphs returns every combination of the keys' values.
func exhaustiveGraphs() [][]*rval {
	var out [][]*rval
	for _, v0 := range exhaustiveValues(0) {
		for _, v1 := range exhaustiveValues(1) {
			for _, v2 := range exhaustiveValues(2) {
				out = append(out, []*rval{v0, v1, v2})
			}
		}
	}
	return out
}

// The kinds of steps.
const (
	stepTxn    = iota // an NB transaction: a/g0/0 removed if desired, else requested as in the graph (or {})
	stepFull          // a full resync
	stepUp            // an upstream resync
	stepDown          // a downstream resync
	stepScoped        // a downstream resync scoped to a/g0/1
	stepNotify        // s/0 appears if it is not there, else goes
	stepFail          // failures injected for what follows
	stepLose          // the southbound loses a/g0/1
	stepKinds
)

var stepNameList = [stepKinds]string{"txn", "full", "upstream", "downstream", "scoped", "notify", "fail", "lose"}

func stepNames(seq []int) string {
	var parts []string
	for _, s := range seq {
		parts = append(parts, stepNameList[s])
	}
	return strings.Join(parts, ",")
}

// exhaustiveSequences returns every sequence of n steps.
func exhaustiveSequences(n int) [][]int {
	if n == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for _, head := range exhaustiveSequences(n - 1) {
		for k := range stepKinds {
			out = append(out, append(append([]int(nil), head...), k))
		}
	}
	return out
}

// exhaustiveScenario builds the scenario of graph g and the steps seq:
// a transaction requesting g, then one transaction per step (a loss, a
// notification or failures are made before an empty transaction).
func exhaustiveScenario(g []*rval, seq []int) scenario {
	first := rtxn{}
	for i, v := range g {
		if v != nil {
			first.Set = append(first.Set, rset{exhaustiveKeys[i], v})
		}
	}
	sc := scenario{Txns: []rtxn{first}}
	desired0 := g[0] != nil
	sUp := false
	for _, s := range seq {
		var tx rtxn
		switch s {
		case stepTxn:
			if desired0 {
				tx.Set = []rset{{exhaustiveKeys[0], nil}}
			} else {
				v := g[0]
				if v == nil {
					v = &rval{}
				}
				tx.Set = []rset{{exhaustiveKeys[0], v}}
			}
			desired0 = !desired0
		case stepFull:
			tx.Resync = kvscheduler.FullResync
		case stepUp:
			tx.Resync = kvscheduler.UpstreamResync
		case stepDown:
			tx.Resync = kvscheduler.DownstreamResync
		case stepScoped:
			tx.Resync, tx.Keys = kvscheduler.DownstreamResync, []string{exhaustiveKeys[1]}
		case stepNotify:
			tx.Notify = []rnotify{{"s/0", !sUp}}
			sUp = !sUp
		case stepFail:
			// Injected before an empty transaction: they wait for the
			// operations they name.
			tx.Fail = []rfail{{"delete", exhaustiveKeys[1]}, {"delete", "d/g0/1/0"}, {"create", exhaustiveKeys[0]}}
		case stepLose:
			tx.Lose = []string{exhaustiveKeys[1]}
		}
		sc.Txns = append(sc.Txns, tx)
	}
	return sc
}
