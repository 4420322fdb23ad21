package kvscheduler_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
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

// The adversary asked the same of the base's own descriptor's Retrieve
// (the reference's setup, where that descriptor claims the items too):
// there a Retrieve returns base values (Descriptor.Retrieve), and an item
// it leaves out exists as its base derives it, as in the VPP-Agent (whose
// refresh rebuilds the items of every base it reads, whatever the dump
// says of them) and as docs/kvscheduler.md's Retrieve contract says. A
// descriptor whose items are to be read claims them apart, with a
// Retrieve that reads them: then a lost item is re-created.
func TestAdvLostItemOfARetrieveThatReportsItemsIsRecreated(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	isItem := func(k string) bool { return strings.HasPrefix(k, "b/") && strings.Count(k, "/") > 1 }
	b := sb.Descriptor("b", "b/")
	b.KeySelector = func(k string) bool { return strings.HasPrefix(k, "b/") && !isItem(k) }
	b.DerivedValues = refItems // "b/1" = "x,y" derives "b/1/x" and "b/1/y"
	b.RetrieveKeys = nil
	retrieve := b.Retrieve
	b.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		all, err := retrieve(ctx, c)
		return slices.DeleteFunc(all, func(kv kvscheduler.KVWithMetadata) bool { return isItem(kv.Key) }), err
	}
	items := sb.Descriptor("item", "b/") // its Retrieve reports the items
	items.KeySelector, items.NBKeyPrefix = isItem, ""
	items.RetrieveKeys = nil
	register(t, s, b, items)
	mustSet(t, s, "b/1", "x,y")
	wantOps(t, sb, "create b/1", "create b/1/x", "create b/1/y")

	sb.Remove("b/1/y")
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	advWantAgree(t, s, sb, "after a downstream resync", "b/")
	wantOps(t, sb, "create b/1/y")
}
