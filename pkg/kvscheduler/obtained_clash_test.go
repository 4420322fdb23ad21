package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestBaseInvalidForTheSouthboundsOwnKeyWaitsForTheKey: a base INVALID
// because a key it derives is the southbound's own (OBTAINED) is applied
// again once the key is free, not by every transaction while the
// southbound still holds it: a transaction that does not request it
// leaves it alone (no operation on it in its record). Whether the
// OBTAINED value was read before the base was requested, or the
// southbound's value was found under the key once the base's create of
// it failed (disown), the clash is the same.
func TestBaseInvalidForTheSouthboundsOwnKeyWaitsForTheKey(t *testing.T) {
	for _, first := range []bool{true, false} {
		x := newAdv6Script(t)
		ctx := context.Background()
		x.sb.Set("d/2", "v|", true)
		if first {
			if _, err := x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
		_, _ = x.nb("b/1", "w@1@2|").Commit(ctx)
		if !first {
			// The read-back found d/2 the southbound's; the resync
			// requests b/1 again and judges the clash.
			_, _ = x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
		}
		if st := x.s.GetValueStatus("b/1"); st.State != kvscheduler.Invalid {
			t.Fatalf("read first %v: b/1 is %s, not INVALID", first, st.State)
		}
		rec, err := x.nb("a/1", "v|").Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range rec.Executed {
			if op.Key == "b/1" {
				t.Errorf("read first %v: a transaction that does not request b/1 attempted it while d/2 is still the southbound's: %s %s NOOP %v, error %v", first, op.Operation, op.Key, op.NOOP, op.Err)
				break
			}
		}
		// The key is free once the southbound no longer holds it: b/1
		// is applied by the job that learns it (the notification; the
		// transaction after it only waits for it), without a resync.
		x.sb.Remove("d/2")
		if err := x.s.PushSBNotification("d/2", nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := x.nb("a/1", "w|").Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if v := x.sb.Values(); v["b/1"] != "w@1@2|" || v["d/2"] != "dv-w@1@2" {
			t.Errorf("read first %v: b/1 not applied once d/2 was gone: %v (b/1 %s)", first, v, x.s.GetValueStatus("b/1").State)
		}
	}
}
