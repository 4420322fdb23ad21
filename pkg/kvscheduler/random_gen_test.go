package kvscheduler_test

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// genScenario draws a random scenario: 3 to 8 base keys in two groups
// (for AnyOf prefixes), 6 to 15 transactions of 1 to 4 changes, some full
// and downstream resyncs, and at most 6 injected failures.
func genScenario(r *rand.Rand) scenario {
	n := 3 + r.IntN(6)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("a/g%d/%d", i%2, i)
	}
	derivedKey := func(kind string) string {
		return fmt.Sprintf("%s/%s/%d", kind, keys[r.IntN(n)][2:], r.IntN(2))
	}
	dep := func() string {
		switch x := r.IntN(100); {
		case x < 60:
			return keys[r.IntN(n)]
		case x < 72:
			return derivedKey("d")
		case x < 80:
			return derivedKey("p")
		case x < 92:
			return fmt.Sprintf("any:a/g%d/", r.IntN(2))
		case x < 96:
			return fmt.Sprintf("any:d/g%d/", r.IntN(2))
		default:
			return "any:p/"
		}
	}
	val := func() *rval {
		v := &rval{Ver: r.IntN(3)}
		for range r.IntN(3) {
			v.Deps = append(v.Deps, dep())
		}
		for j := range 2 {
			if r.IntN(10) < 3 {
				v.Derived = append(v.Derived, j)
			}
		}
		if r.IntN(10) < 3 {
			v.Props = append(v.Props, 0)
		}
		return v
	}
	sc := scenario{NoUpdate: r.IntN(4) == 0, NoDerivedRetrieve: r.IntN(2) == 0}
	fails := 0
	for range 6 + r.IntN(10) {
		var tx rtxn
		switch x := r.IntN(10); {
		case x == 0:
			tx.Resync = kvscheduler.FullResync
		case x == 1:
			tx.Resync = kvscheduler.DownstreamResync
		}
		if tx.Resync != kvscheduler.DownstreamResync {
			for range 1 + r.IntN(4) {
				k := keys[r.IntN(n)]
				if r.IntN(5) == 0 {
					tx.Set = append(tx.Set, rset{Key: k})
				} else {
					tx.Set = append(tx.Set, rset{Key: k, Val: val()})
				}
			}
		}
		for fails < 6 && r.IntN(10) < 3 {
			fails++
			k := keys[r.IntN(n)]
			if r.IntN(3) == 0 {
				k = derivedKey("d")
			}
			tx.Fail = append(tx.Fail, rfail{Op: []string{"create", "update", "delete"}[r.IntN(3)], Key: k})
		}
		sc.Txns = append(sc.Txns, tx)
	}
	return sc
}

// shrink reduces sc to a smaller scenario that fails with the same kind of
// failure: it drops transactions, then failures and changes, then
// dependencies, derived values and properties, then simplifies options,
// repeating while anything helps. Every candidate is run once (a flaky
// candidate is simply not kept).
func shrink(sc scenario, f *propFailure) (scenario, *propFailure) {
	sh := &shrinker{sc: sc, f: f}
	for progress := true; progress; {
		progress = sh.dropTxns()
		progress = sh.dropParts() || progress
		progress = sh.simplifyValues() || progress
		progress = sh.dropFlags() || progress
	}
	return sh.sc, sh.f
}

// shrinker holds the smallest scenario found so far that fails as the
// first one did, and its failure.
type shrinker struct {
	sc scenario
	f  *propFailure
}

// try keeps c if it fails with the same class of failure.
func (sh *shrinker) try(c scenario) bool {
	if g := runScenario(c); g != nil && g.kind == sh.f.kind {
		sh.sc, sh.f = c, g
		return true
	}
	return false
}

// dropTxns tries the scenario without each of its transactions.
func (sh *shrinker) dropTxns() (progress bool) {
	for i := len(sh.sc.Txns) - 1; i >= 0; i-- {
		if i < len(sh.sc.Txns) {
			c := sh.sc
			c.Txns = slices.Delete(slices.Clone(sh.sc.Txns), i, i+1)
			progress = sh.try(c) || progress
		}
	}
	return progress
}

// dropParts tries each transaction without each of its parts.
func (sh *shrinker) dropParts() (progress bool) {
	for i := 0; i < len(sh.sc.Txns); i++ {
		for j := len(sh.sc.Txns[i].Notify) - 1; j >= 0; j-- {
			c := cloneScenario(sh.sc)
			c.Txns[i].Notify = slices.Delete(c.Txns[i].Notify, j, j+1)
			progress = sh.try(c) || progress
		}
		for j := len(sh.sc.Txns[i].Lose) - 1; j >= 0; j-- {
			c := cloneScenario(sh.sc)
			c.Txns[i].Lose = slices.Delete(c.Txns[i].Lose, j, j+1)
			progress = sh.try(c) || progress
		}
		if len(sh.sc.Txns[i].Keys) > 0 {
			c := cloneScenario(sh.sc)
			c.Txns[i].Keys = nil
			progress = sh.try(c) || progress
		}
		for j := len(sh.sc.Txns[i].Fail) - 1; j >= 0; j-- {
			c := cloneScenario(sh.sc)
			c.Txns[i].Fail = slices.Delete(c.Txns[i].Fail, j, j+1)
			progress = sh.try(c) || progress
		}
		for j := len(sh.sc.Txns[i].Set) - 1; j >= 0; j-- {
			c := cloneScenario(sh.sc)
			c.Txns[i].Set = slices.Delete(c.Txns[i].Set, j, j+1)
			progress = sh.try(c) || progress
		}
		if r := sh.sc.Txns[i].Resync; r != kvscheduler.NoResync && r != kvscheduler.DownstreamResync {
			c := cloneScenario(sh.sc)
			c.Txns[i].Resync = kvscheduler.NoResync
			progress = sh.try(c) || progress
		}
	}
	return progress
}

// simplifyValues tries each value set without each of its dependencies,
// derived values and properties, and at version 0.
func (sh *shrinker) simplifyValues() (progress bool) {
	for i := 0; i < len(sh.sc.Txns); i++ {
		for j := 0; j < len(sh.sc.Txns[i].Set); j++ {
			if sh.sc.Txns[i].Set[j].Val == nil {
				continue
			}
			for field := range 4 {
				for x := 0; ; x++ {
					c := cloneScenario(sh.sc)
					if !simplified(c.Txns[i].Set[j].Val, field, x) {
						break
					}
					if sh.try(c) {
						progress = true
						x-- // the next element moved to x
					}
				}
			}
		}
	}
	return progress
}

// simplified drops element x of v's field (0: Deps, 1: Derived, 2: Props;
// 3: sets Ver to 0 once) and tells whether there was one.
func simplified(v *rval, field, x int) bool {
	var ok bool
	switch field {
	case 0:
		if ok = x < len(v.Deps); ok {
			v.Deps = slices.Delete(v.Deps, x, x+1)
		}
	case 1:
		if ok = x < len(v.Derived); ok {
			v.Derived = slices.Delete(v.Derived, x, x+1)
		}
	case 2:
		if ok = x < len(v.Props); ok {
			v.Props = slices.Delete(v.Props, x, x+1)
		}
	case 3:
		if ok = x == 0 && v.Ver != 0; ok {
			v.Ver = 0
		}
	}
	// No empty lists: formatScenario prints none, and the values it
	// prints must compare as these do.
	if len(v.Deps) == 0 {
		v.Deps = nil
	}
	if len(v.Derived) == 0 {
		v.Derived = nil
	}
	if len(v.Props) == 0 {
		v.Props = nil
	}
	return ok
}

// dropFlags tries the scenario without each of its descriptors' options.
func (sh *shrinker) dropFlags() (progress bool) {
	if sh.sc.NoUpdate {
		c := sh.sc
		c.NoUpdate = false
		progress = sh.try(c) || progress
	}
	if sh.sc.NoDerivedRetrieve {
		c := sh.sc
		c.NoDerivedRetrieve = false
		progress = sh.try(c) || progress
	}
	if sh.sc.RetrieveDerived {
		c := sh.sc
		c.RetrieveDerived = false
		progress = sh.try(c) || progress
	}
	if sh.sc.ClaimDerived {
		c := sh.sc
		c.ClaimDerived, c.RetrieveDerived = false, false
		progress = sh.try(c) || progress
	}
	return progress
}

func cloneScenario(sc scenario) scenario {
	c := sc
	c.Txns = make([]rtxn, len(sc.Txns))
	for i, tx := range sc.Txns {
		c.Txns[i] = rtxn{Resync: tx.Resync, Keys: slices.Clone(tx.Keys), Lose: slices.Clone(tx.Lose), Notify: slices.Clone(tx.Notify),
			Fail: slices.Clone(tx.Fail), Set: make([]rset, len(tx.Set))}
		for j, s := range tx.Set {
			c.Txns[i].Set[j].Key = s.Key
			if s.Val != nil {
				v := *s.Val
				v.Deps, v.Derived, v.Props = slices.Clone(v.Deps), slices.Clone(v.Derived), slices.Clone(v.Props)
				c.Txns[i].Set[j].Val = &v
			}
		}
	}
	return c
}
