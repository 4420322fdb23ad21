package kvscheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// The adv5 fuzz seed 2082 case (TestUndoOfATakeoverDeletesDerivedValuesOrderedAfterABaseDeletedForAClash)
// with the undo stopped by the Commit's context. b/1 = w@2| derives d/2. A
// transaction with revert creates b/2 = w@1@2|~b/1, which takes d/2 on
// the strength of b/1's request further on (w@1|); b/1's update then
// clashes on d/1 and is INVALID, which takeback.go keeps in the southbound
// (the undo gives it back its old value), and the transaction reverts. The
// context ends once the undo deleted d/1; the next transaction finishes
// the undo (b/2 withdrawn first, then b/1 given back w@2|). Before the
// fix, what was left after the next transaction: b/1 reported INVALID
// (naming a clash on d/2, where the Commit named d/1) while the
// southbound held it, and b/2 reported CONFIGURED while the southbound
// lacked its derived d/1. Before 8713cff, b/1 was deleted with its
// INVALID state (h25o's suspicion).
func TestAdv8StoppedUndoLeavesAnInvalidBaseHeld(t *testing.T) {
	dd := *fzDerivedDeps
	*fzDerivedDeps = true
	t.Cleanup(func() { *fzDerivedDeps = dd })
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	var mu sync.Mutex
	var cancel func()
	n := 0
	hook := func(op, k string) {
		mu.Lock()
		defer mu.Unlock()
		if cancel == nil {
			return
		}
		// The forward pass runs 3 operations (create b/2, create d/1,
		// update d/2); the undo's first delete of d/1 stops it.
		if n++; n > 3 && op == "delete" && k == "d/1" {
			cancel()
		}
	}
	for _, d := range fzDescs(sb, &fzCancel{}) {
		c, u, del := d.Create, d.Update, d.Delete
		d.Create = func(ctx context.Context, k string, v any) (any, error) {
			md, err := c(ctx, k, v)
			hook("create", k)
			return md, err
		}
		d.Update = func(ctx context.Context, k string, o, v, md any) (any, error) {
			md, err := u(ctx, k, o, v, md)
			hook("update", k)
			return md, err
		}
		d.Delete = func(ctx context.Context, k string, v, md any) error {
			err := del(ctx, k, v, md)
			hook("delete", k)
			return err
		}
		register(t, s, d)
	}
	mustSet(t, s, "b/1", "w@2|")
	cctx, c := context.WithCancel(context.Background())
	defer c()
	mu.Lock()
	cancel = c
	mu.Unlock()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("b/2", "w@1@2|~b/1").SetValue("b/1", "w@1|").WithRevert().Commit(cctx)
	barrier(t, s) // the stopped transaction is over
	mustSet(t, s, "a/1", "v|")
	got := sb.Values()
	var bad []string
	for _, k := range []string{"b/1", "b/2"} {
		st := s.GetValueStatus(k)
		if st.State == kvscheduler.Invalid && got[k] != nil {
			bad = append(bad, fmt.Sprintf("%s INVALID (%v) but the southbound holds %v", k, st.Error, got[k]))
		}
	}
	if msg := fzCheckDerivedHeld(s); msg != "" {
		bad = append(bad, msg)
	}
	if st := s.GetValueStatus("b/2"); st.State == kvscheduler.Configured && got["b/2"] == "w@1@2|~b/1" && got["d/1"] == nil {
		bad = append(bad, fmt.Sprintf("b/2 CONFIGURED holding w@1@2|~b/1 but the southbound holds no d/1 (d/1 %s)", advState(s, "d/1")))
	}
	if len(bad) > 0 {
		t.Fatalf("%v (southbound %v; stopped commit: %v; ops %v; northbound view %v)", bad, got, err, sb.OpStrings(), s.DumpValues("b", "b/", kvscheduler.NBView))
	}
}
