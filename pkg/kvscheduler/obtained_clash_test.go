package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
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

// TestResyncReadingTheDerivedKeyFirstKeepsTheSouthboundsOwnValue: as
// TestAdv6ResyncNeverOverwritesTheSouthboundsOwnValueUnderADerivedKey,
// with the derived values' descriptor registered (so read) before their
// bases': the read of d reports d/2 as the southbound's own, so the read
// of b/1, which derives d/2, leaves it to the southbound (a derived value
// read with no origin by its own descriptor first is b/1's). Before, it
// took it as b/1's derived value, and the resync overwrote it.
func TestResyncReadingTheDerivedKeyFirstKeepsTheSouthboundsOwnValue(t *testing.T) {
	sb := kvtest.New()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "d/2", Value: "dv-" + v.(string)}}
	}
	for _, desc := range []*kvscheduler.Descriptor{d, b} {
		if err := s.RegisterDescriptor(ctx, desc); err != nil {
			t.Fatal(err)
		}
	}
	sb.Set("d/2", "v", true)
	txn := s.StartNBTransaction()
	txn.SetValue("b/1", "w")
	if _, err := txn.Commit(ctx); err == nil {
		t.Fatal("the create of d/2, which the southbound holds, did not fail")
	}
	sb.ResetOps()
	_, err = s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
	if v := sb.Values()["d/2"]; v != "v" {
		st := s.GetValueStatus("d/2")
		t.Errorf("the southbound's own d/2 is now %v (resync error %v; ops %v; d/2 %s, base %q)", v, err, sb.OpStrings(), st.State, st.BaseKey)
	}
}
