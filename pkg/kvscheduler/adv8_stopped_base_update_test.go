package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// An update of a base that changes its derived keys deletes the derived
// values it no longer derives, then updates the base. When the context of
// the Commit ends after such a delete, the transaction stops before the
// base's update; "the next transaction, whatever it sets, checks again
// what the stopped one reached but left undone" (docs/kvscheduler.md).
// b/2 = w@2| derives d/2; a transaction requests b/2 = w@1| (deriving d/1
// instead) and its context ends once d/2's delete ran; the next
// transaction (an unrelated request) finishes the update. Before the fix
// the southbound held b/2 = w@2| without its derived d/2, and without
// d/1, while the northbound view said w@1| and b/2 was reported
// CONFIGURED; the next transaction changed none of it, until a resync.
func TestAdv8StoppedBaseUpdateLeavesTheBaseWithoutDerivedValues(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/2", "w@2|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.ResetOps()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.fc.arm("d/2", cancel) // the caller gives up once d/2's delete ran
	_, err := x.nb("b/2", "w@1|").Commit(cctx)
	x.fc.disarm()
	barrier(t, x.s) // the stopped transaction is over
	if _, err := x.nb("a/1", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := x.sb.Values()
	st := x.s.GetValueStatus("b/2")
	held := got["b/2"]
	want := map[any]string{"w@2|": "d/2", "w@1|": "d/1"}[held]
	if st.State == kvscheduler.Configured && (want == "" || got[want] == nil) {
		var nb any
		for _, kv := range x.s.DumpValues("b", "b/", kvscheduler.NBView) {
			if kv.Key == "b/2" {
				nb = kv.Value
			}
		}
		t.Fatalf("b/2 %s, the southbound holding b/2 = %v without its derived %s (northbound view %v; d/1 %s; d/2 %s; southbound %v; stopped commit: %v; ops %v)",
			st.State, held, want, nb, advState(x.s, "d/1"), advState(x.s, "d/2"), got, err, x.sb.OpStrings())
	}
}
