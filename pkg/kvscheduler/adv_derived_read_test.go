package kvscheduler_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Descriptor.Retrieve's contract: "a derived value is known from its base's
// read unless its own descriptor has Retrieve, whose read then tells whether
// it exists". A derived value whose descriptor has Retrieve and does not
// report it is still taken as existing with its base: a full resync
// neither notices it lost nor creates it, and reports it CONFIGURED while
// the southbound does not hold it. A resync scoped to the derived key does
// create it, so the scoped and the full resync disagree.

func TestAdvFullResyncRepairsLostDerivedValue(t *testing.T) {
	advOpen(t, "a derived value lost behind the scheduler's back, whose own descriptor's Retrieve no longer reports it, is reported CONFIGURED and never re-created by a full resync (a resync scoped to its key does re-create it)")
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b, d := advBaseDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v")
	wantOps(t, sb, "create b/1", "create d/1")

	sb.Remove("d/1") // lost behind the scheduler's back
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after a downstream resync", "b/", "d/")
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("b/1", "v").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after a full resync", "b/", "d/")
	wantOps(t, sb, "create d/1")
}

func TestAdvScopedAndFullResyncAgreeOnLostDerivedValue(t *testing.T) {
	advOpen(t, "a resync scoped to a lost derived key re-creates it, a full resync does not: they disagree")
	ctx := context.Background()
	run := func(scoped bool) []string {
		sb := kvtest.New()
		s := newSched(t, kvscheduler.Options{})
		b, d := advBaseDerived(sb)
		register(t, s, b, d)
		mustSet(t, s, "b/1", "v")
		sb.Remove("d/1")
		sb.ResetOps()
		txn := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)
		if scoped {
			txn.WithResyncKeys("d/1")
		}
		if _, err := txn.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return sb.OpStrings()
	}
	scoped, full := run(true), run(false)
	if !reflect.DeepEqual(scoped, full) {
		t.Fatalf("scoped resync of d/1 ran %v, full resync ran %v", scoped, full)
	}
}

func TestAdvFirstResyncCreatesMissingDerivedValue(t *testing.T) {
	advOpen(t, "a first full resync over a southbound holding a base but not its derived value (whose descriptor's Retrieve says it does not exist) reports the derived value CONFIGURED without creating it")
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b, d := advBaseDerived(sb)
	register(t, s, b, d)
	sb.Set("b/1", "v", false) // the base survived a restart, d/1 did not
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("b/1", "v").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after the first full resync", "b/", "d/")
	wantOps(t, sb, "create d/1")
}

func TestAdvScopedResyncOfFoundBaseReadsItsDerivedValue(t *testing.T) {
	advOpen(t, "a resync scoped to a base found in the southbound without its derived value takes the derived value for existing (DISCOVERED, in the SB view) without asking its descriptor; the next full resync then fails to delete it and leaves the base in the southbound")
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b, d := advBaseDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v")
	sb.Set("b/3", "v", false) // appears behind the scheduler's back, without d/3
	sb.ResetOps()
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("b/3").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after the scoped resync of b/3", "b/", "d/")
	// b/3 has the NB key prefix and nobody requests it: a full resync removes it.
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Errorf("full resync: %v", err)
	}
	advWantAgree(t, s, sb, "after the full resync", "b/", "d/")
	if _, ok := sb.Values()["b/3"]; ok {
		t.Errorf("b/3 left in the southbound (%s)", advState(s, "b/3"))
	}
}

func TestAdvDerivedValueChangedBehindTheBackIsRepairedWhateverTheRegistrationOrder(t *testing.T) {
	advOpen(t, "with the derived values' descriptor registered before their bases', a derived value changed behind the scheduler's back is read by its descriptor's Retrieve, then overwritten by the base's derivation: a downstream resync (full, or scoped to the base) reports it CONFIGURED as derived and never updates it; registered the other way round, the same resync updates it")
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b, d := advBaseDerived(sb)
	register(t, s, d, b) // d first: nothing documents an order
	mustSet(t, s, "b/1", "v")
	wantOps(t, sb, "create b/1", "create d/1")

	sb.Set("d/1", "changed", false) // drift of the derived value
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after a downstream resync", "b/", "d/")
	if got := sb.Values()["d/1"]; got != "v" {
		t.Errorf("after a downstream resync (ops %v) the southbound holds d/1=%v, want v", sb.OpStrings(), got)
	}
	sb.ResetOps()
	sb.Set("d/1", "changed", false)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("b/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after a downstream resync scoped to b/1", "b/", "d/")
}

func TestAdvLostItemOfARetrieveThatReportsItemsIsRecreated(t *testing.T) {
	advOpen(t, "with the reference's setup (the base's descriptor claims its derived items) and a Retrieve that reports the items too, an item lost behind the scheduler's back is reported CONFIGURED and never re-created by a resync, although the same read reports its sibling")
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b := sb.Descriptor("b", "b/") // its Retrieve reports every "b/" key: bases and items
	b.DerivedValues = refItems    // "b/1" = "x,y" derives "b/1/x" and "b/1/y"
	b.RetrieveKeys = nil
	register(t, s, b)
	mustSet(t, s, "b/1", "x,y")
	wantOps(t, sb, "create b/1", "create b/1/x", "create b/1/y")

	sb.Remove("b/1/y")
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after a downstream resync", "b/")
	wantOps(t, sb, "create b/1/y")
}
