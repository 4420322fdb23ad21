package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// A re-create is two operations: the delete of the old value and the
// create of the new one. When the context of the Commit ends after the
// delete (the callback saw it end only once it had returned), the
// transaction "stops before its next operation" and "the next
// transaction, whatever it sets, checks again what the stopped one reached
// but left undone" (docs/kvscheduler.md). r/1 = v| is held; a transaction
// requests r/1 = w| (r's descriptor updates by re-creation) and its
// context ends once r/1's delete ran. The northbound view keeps r/1 = w|:
// the next transaction (an unrelated request) finishes the re-create
// (docs/kvscheduler.md, a value reached mid-change). Before the fix r/1
// was reported REMOVED (the state of a value the northbound removed) and
// the next transaction left it deleted: a value still wanted was gone
// from the southbound until a resync.
func TestAdv8StoppedRecreateLeavesAWantedValueDeleted(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("r/1", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.ResetOps()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.fc.arm("r/1", cancel) // the caller gives up once r/1's delete ran
	_, err := x.nb("r/1", "w|").Commit(cctx)
	x.fc.disarm()
	barrier(t, x.s) // the stopped transaction is over
	if _, err := x.nb("a/1", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var nb any
	for _, kv := range x.s.DumpValues("r", "r/", kvscheduler.NBView) {
		if kv.Key == "r/1" {
			nb = kv.Value
		}
	}
	if got := x.sb.Values(); nb != nil && got["r/1"] == nil {
		t.Fatalf("the northbound view holds r/1 = %v, the southbound holds no r/1 after the next transaction (r/1 %s; stopped commit: %v; ops %v)",
			nb, advState(x.s, "r/1"), err, x.sb.OpStrings())
	}
}
