package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// A full resync re-creates b/1 (the southbound replaced its value; b
// updates by re-creation), which takes d/1 with it; d/1's delete is
// refused while a/2 (Requires d/1) is held, and a/2's while a/3, as the
// southbound holds it, depends on it. The resync then re-creates b/1,
// which derives d/1 again, and updates a/3 so that it needs a/2 no more:
// the deletes that waited for a/3 and a/2 must not take away d/1 (and
// a/2), which are wanted again. Before, d/1's refused delete, released
// once a/2 went, deleted it under the CONFIGURED b/1 (ops [delete b/1
// create b/1 update a/3 delete a/2 delete d/1]). Reduced from adv5 fuzz seed 80586 of
// -fznoownedr -fzretry -fzdd -fzdheld -fzrb -fzinv.
func TestAdv8FullResyncKeepsADerivedValueWhoseRefusedDeleteWaited(t *testing.T) {
	rb := *fzRecreateB
	*fzRecreateB = true
	t.Cleanup(func() { *fzRecreateB = rb })
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "v@1|", "a/2", "w|d/1", "a/3", "w|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Set("b/1", "v|", false)
	x.sb.Set("a/3", "v|a/2", false)
	x.sb.ResetOps()
	full := x.nb("b/1", "v@1|", "a/2", "w|d/1", "a/3", "w|").WithResync(kvscheduler.FullResync)
	if _, err := full.Commit(ctx); err != nil {
		t.Logf("full resync: %v", err)
	}
	got := x.sb.Values()
	for _, k := range []string{"b/1", "d/1", "a/2", "a/3"} {
		if got[k] == nil {
			t.Errorf("the southbound lacks %s: it holds %v (ops %v)", k, got, x.sb.OpStrings())
		}
	}
	if msg := fzCheckDerivedHeld(x.s); msg != "" {
		t.Errorf("%s", msg)
	}
}
