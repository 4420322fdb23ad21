package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// expectedSB computes independently which desired values must exist: the
// largest set in which every value's dependencies are in the set.
func expectedSB(desired map[string]any) map[string]any {
	in := map[string]any{}
	for k, v := range desired {
		in[k] = v
	}
	for changed := true; changed; {
		changed = false
		for k, v := range in {
			_, deps, _ := strings.Cut(v.(string), "|")
			for _, d := range strings.Split(deps, ",") {
				if d == "" {
					continue
				}
				if _, ok := in[d]; !ok {
					delete(in, k)
					changed = true
					break
				}
			}
		}
	}
	return in
}

// step is one random change: a value for key i depending on keys deps, or
// a deletion.
type step struct {
	key    int
	delete bool
	deps   []int
	ver    int
}

func runSteps(t testing.TB, keys int, txns [][]step, resyncEvery int) {
	s := newSched(t, kvscheduler.Options{HistoryMaxCount: -1})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("a", "a/")))
	desired := map[string]any{}
	for i, txn := range txns {
		full := resyncEvery > 0 && i%resyncEvery == resyncEvery-1
		tx := s.StartNBTransaction()
		for _, st := range txn {
			k := fmt.Sprintf("a/%d", st.key%keys)
			if st.delete {
				delete(desired, k)
				tx.SetValue(k, nil)
				continue
			}
			var deps []string
			for _, d := range st.deps {
				deps = append(deps, fmt.Sprintf("a/%d", d%keys))
			}
			v := fmt.Sprintf("v%d|%s", st.ver, strings.Join(deps, ","))
			desired[k] = v
			tx.SetValue(k, v)
		}
		if full {
			tx = s.StartNBTransaction().WithResync(kvscheduler.FullResync)
			for k, v := range desired {
				tx.SetValue(k, v)
			}
		}
		if _, err := tx.Commit(context.Background()); err != nil {
			t.Fatalf("txn %d: %v", i, err)
		}
		want := expectedSB(desired)
		if got := sb.Values(); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("after txn %d:\n got  %v\n want %v", i, got, want)
		}
		for k := range desired {
			st := s.GetValueStatus(k)
			_, ok := want[k]
			if ok != (st.State == kvscheduler.Configured) || !ok && st.State != kvscheduler.Pending {
				t.Fatalf("after txn %d: %s is %s", i, k, st.State)
			}
		}
	}
}

func TestPropertyRandomTransactions(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		keys := 3 + r.IntN(10)
		var txns [][]step
		for range 20 {
			var txn []step
			for range 1 + r.IntN(5) {
				st := step{key: r.IntN(keys), delete: r.IntN(4) == 0, ver: r.IntN(3)}
				for range r.IntN(3) {
					st.deps = append(st.deps, r.IntN(keys))
				}
				txn = append(txn, st)
			}
			txns = append(txns, txn)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSteps(t, keys, txns, 5) })
	}
}

// FuzzTransaction decodes transactions from bytes: each byte pair is a key
// and an instruction (delete, or a version with up to two dependencies); a
// key byte 0xff ends a transaction.
func FuzzTransaction(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 2, 0xff, 0, 0x13})
	f.Add([]byte{3, 0x31, 1, 0x21, 3, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			return
		}
		var txns [][]step
		var cur []step
		for i := 0; i+1 < len(data); i += 2 {
			k, ins := int(data[i]), int(data[i+1])
			if k == 0xff {
				txns = append(txns, cur)
				cur = nil
				continue
			}
			st := step{key: k, delete: ins == 0, ver: ins & 3}
			if ins&4 != 0 {
				st.deps = append(st.deps, ins>>3)
			}
			if ins&0x80 != 0 {
				st.deps = append(st.deps, ins>>5)
			}
			cur = append(cur, st)
		}
		txns = append(txns, cur)
		runSteps(t, 6, txns, 0)
	})
}

// TestPropertyFailuresHealedByDownstreamResync injects random failures into
// random transactions (best effort, no retries); a downstream resync
// afterwards must always reach the expected state.
func TestPropertyFailuresHealedByDownstreamResync(t *testing.T) {
	ops := []string{"create", "update", "delete"}
	for seed := uint64(1); seed <= 30; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			keys := 3 + r.IntN(8)
			s := newSched(t, kvscheduler.Options{HistoryMaxCount: 100})
			sb := kvtest.New()
			a := withDeps(sb.Descriptor("a", "a/"))
			if seed%2 == 0 {
				a.Update = nil // exercise re-creates
			}
			register(t, s, a)
			desired := map[string]any{}
			failures := 0
			defer func() { t.Logf("%d transactions failed", failures) }()
			for i := 0; i < 15; i++ {
				for range r.IntN(3) {
					sb.FailNext(ops[r.IntN(3)], fmt.Sprintf("a/%d", r.IntN(keys)), fmt.Errorf("injected %d", i))
				}
				tx := s.StartNBTransaction()
				if r.IntN(3) == 0 {
					tx.WithRevert()
				}
				snapshot := map[string]any{}
				for k, v := range desired {
					snapshot[k] = v
				}
				for range 1 + r.IntN(4) {
					k := fmt.Sprintf("a/%d", r.IntN(keys))
					if r.IntN(4) == 0 {
						delete(desired, k)
						tx.SetValue(k, nil)
						continue
					}
					var deps []string
					for range r.IntN(3) {
						deps = append(deps, fmt.Sprintf("a/%d", r.IntN(keys)))
					}
					v := fmt.Sprintf("v%d|%s", r.IntN(3), strings.Join(deps, ","))
					desired[k] = v
					tx.SetValue(k, v)
				}
				_, err := tx.Commit(context.Background())
				var te *kvscheduler.TransactionError
				if errors.As(err, &te) {
					failures++
				}
				// The undo applies every previous request, even when one
				// of them fails (RevertFailed): those are the requests the
				// resync re-applies then.
				if te != nil && (te.Reverted || len(te.RevertFailed) > 0) {
					desired = snapshot
				}
				sb.ClearFailures()
				if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background()); err != nil {
					for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
						t.Log(r)
					}
					t.Fatalf("step %d: resync: %v", i, err)
				}
				want := expectedSB(desired)
				if got := sb.Values(); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
					for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
						t.Log(r)
					}
					t.Fatalf("step %d:\n got  %v\n want %v", i, got, want)
				}
			}
		})
	}
}
