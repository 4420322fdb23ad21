package kvscheduler_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// The paths issue 25 found untested by TestRandomGraphs, drawn from a
// stream of their own (so that every seed's scenario of before is still
// drawn, with these added): a descriptor claiming its derived keys, with
// a Retrieve of base values only or of derived values too; downstream
// resyncs scoped to some keys (WithResyncKeys); base values the
// southbound loses behind the scheduler's back, with their derived values.

// extendScenario adds issue 25's paths to sc, drawn from r.
func extendScenario(r *rand.Rand, sc *scenario) {
	sc.ClaimDerived = r.IntN(3) == 0
	sc.RetrieveDerived = sc.ClaimDerived && r.IntN(2) == 0
	var keys []string
	for _, tx := range sc.Txns {
		for _, s := range tx.Set {
			keys = append(keys, s.Key)
		}
	}
	if len(keys) == 0 {
		return
	}
	for i := range sc.Txns {
		tx := &sc.Txns[i]
		if tx.Resync == kvscheduler.DownstreamResync && r.IntN(2) == 0 {
			for range 1 + r.IntN(3) {
				k := keys[r.IntN(len(keys))]
				if r.IntN(3) == 0 {
					k = fmt.Sprintf("d/%s/%d", k[2:], r.IntN(2))
				}
				tx.Keys = append(tx.Keys, k)
			}
		}
		if r.IntN(10) == 0 {
			tx.Lose = append(tx.Lose, keys[r.IntN(len(keys))])
		}
	}
}

// descriptors returns the descriptors of sc over the harness's southbound,
// wrapped to check the order of their calls.
func (h *harness) descriptors(sc scenario) []*kvscheduler.Descriptor {
	a, d := h.sb.Descriptor("a", "a/"), h.sb.Descriptor("d", "d/")
	// Values of "d/" keys are strings: with ClaimDerived, "a" is asked
	// about them too.
	a.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
		if rv, ok := v.(rval); ok {
			return rv.deps()
		}
		return nil
	}
	a.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		if rv, ok := v.(rval); ok {
			return rv.derived(k)
		}
		return nil
	}
	if sc.NoUpdate {
		a.Update = nil
	}
	if !sc.ClaimDerived {
		if sc.NoDerivedRetrieve {
			d.Retrieve, d.RetrieveKeys = nil, nil
		}
		return []*kvscheduler.Descriptor{h.wrap(a), h.wrap(d)}
	}
	a.KeySelector = func(k string) bool { return strings.HasPrefix(k, "a/") || strings.HasPrefix(k, "d/") }
	a.KeyLabel = func(k string) string { return k }
	if !sc.RetrieveDerived {
		// Retrieve returns base values only; a scoped read falls back on
		// it (a RetrieveKeys that does not return a key says it does not
		// exist).
		a.RetrieveKeys = nil
		return []*kvscheduler.Descriptor{h.wrap(a)}
	}
	aRet, dRet, aKeys, dKeys := a.Retrieve, d.Retrieve, a.RetrieveKeys, d.RetrieveKeys
	nb := func(kvs []kvscheduler.KVWithMetadata) []kvscheduler.KVWithMetadata {
		for i := range kvs {
			kvs[i].Origin = kvscheduler.FromNB // the southbound holds only the northbound's values
		}
		return kvs
	}
	a.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		bases, err := aRet(ctx, c)
		if err != nil {
			return nil, err
		}
		derived, err := dRet(ctx, nil)
		return append(bases, nb(derived)...), err
	}
	a.RetrieveKeys = func(ctx context.Context, keys []string, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		var bk, dk []string
		for _, k := range keys {
			if strings.HasPrefix(k, "d/") {
				dk = append(dk, k)
			} else {
				bk = append(bk, k)
			}
		}
		bases, err := aKeys(ctx, bk, c)
		if err != nil {
			return nil, err
		}
		derived, err := dKeys(ctx, dk, nil)
		return append(bases, nb(derived)...), err
	}
	return []*kvscheduler.Descriptor{h.wrap(a)}
}

// lose removes base k from the southbound behind the scheduler's back,
// with every derived value of it there (those its value derives, and any
// left over by a failed delete: a derived value exists only with its
// base, which is what a Retrieve of base values relies on). The scheduler
// believes they are there until it reads them back, so the order checks
// count them as present.
func (h *harness) lose(k string) {
	cur := h.sb.Values()
	if _, ok := cur[k]; !ok {
		return
	}
	for x, v := range cur {
		if x == k || baseOf(x) == k {
			h.sb.Remove(x)
			h.lost[x] = v
		}
	}
}

// found forgets the losses a resync read back: all of them, or those of
// the keys it was scoped to (with their derived values). A derived key a
// scoped resync names is read only if its own descriptor, not its base's,
// has Retrieve (otherwise it exists as its base does, as far as the
// scheduler knows: the base's Retrieve returns base values, and derived
// values it returns too are not believed gone when it leaves them out).
func (h *harness) found(sc scenario, tx rtxn) {
	if tx.Resync == kvscheduler.NoResync || tx.Resync == kvscheduler.UpstreamResync {
		return
	}
	if len(tx.Keys) == 0 {
		clear(h.lost)
		return
	}
	derivedRead := !sc.ClaimDerived && !sc.NoDerivedRetrieve
	for _, k := range tx.Keys {
		if baseOf(k) != "" && !derivedRead {
			continue
		}
		delete(h.lost, k)
		for l := range h.lost {
			if baseOf(l) == k {
				delete(h.lost, l)
			}
		}
	}
}

// believed is what the scheduler may believe exists: the southbound's
// content (see present) and the values it lost behind the scheduler's
// back.
func (h *harness) believed(cur map[string]any) map[string]bool {
	if len(h.lost) == 0 {
		return present(cur)
	}
	all := make(map[string]any, len(cur)+len(h.lost))
	for k, v := range h.lost {
		all[k] = v
	}
	for k, v := range cur {
		all[k] = v
	}
	return present(all)
}

// rnotify is a southbound notification: an own value "s/<i>" of the
// southbound appearing (Up) or going, or a derived value "d/..." the
// southbound holds, notified again as it is (the scheduler ignores it:
// the northbound manages it).
type rnotify struct {
	Key string
	Up  bool
}

// extendNotifications adds, from r, dependencies of desired values on the
// southbound's own values and notifications of them, and notifications of
// derived keys.
func extendNotifications(r *rand.Rand, sc *scenario) {
	for i := range sc.Txns {
		tx := &sc.Txns[i]
		for _, s := range tx.Set {
			if s.Val != nil && r.IntN(7) == 0 {
				d := fmt.Sprintf("s/%d", r.IntN(2))
				if r.IntN(3) == 0 {
					d = "any:s/"
				}
				s.Val.Deps = append(s.Val.Deps, d)
			}
		}
		if r.IntN(6) == 0 {
			tx.Notify = append(tx.Notify, rnotify{Key: fmt.Sprintf("s/%d", r.IntN(2)), Up: r.IntN(3) > 0})
		}
		if len(tx.Set) > 0 && r.IntN(10) == 0 {
			k := tx.Set[r.IntN(len(tx.Set))].Key
			tx.Notify = append(tx.Notify, rnotify{Key: fmt.Sprintf("d/%s/%d", k[2:], r.IntN(2)), Up: true})
		}
	}
}

// notify makes the southbound change (an own value appears or goes) and
// tells the scheduler; a derived value is notified as the southbound
// holds it, if it does. The transaction that follows waits for it.
func (h *harness) notify(s *kvscheduler.Scheduler, n rnotify) *propFailure {
	var v any
	switch {
	case strings.HasPrefix(n.Key, "d/"):
		cur, ok := h.sb.Values()[n.Key]
		if !ok {
			return nil
		}
		v = cur
	case n.Up:
		v = "up"
		h.sb.Set(n.Key, v, true)
		h.owned[n.Key] = v
	default:
		h.sb.Remove(n.Key)
		delete(h.owned, n.Key)
	}
	if err := s.PushSBNotification(n.Key, v, nil); err != nil {
		return &propFailure{kind: "notify", msg: err.Error(), step: h.step}
	}
	return nil
}

// ownedKeys are the southbound's own values, which exist whatever the
// northbound wants and satisfy dependencies.
func (h *harness) ownedKeys() map[string]bool {
	out := make(map[string]bool, len(h.owned))
	for k := range h.owned {
		out[k] = true
	}
	return out
}

// withOwned adds the southbound's own values to what it must hold.
func (h *harness) withOwned(m map[string]any) map[string]any {
	for k, v := range h.owned {
		m[k] = v
	}
	return m
}
