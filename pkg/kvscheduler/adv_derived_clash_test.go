package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Keys claimed twice: a derived key that two bases derive, and a key that
// is both requested by the northbound and derived from a base. Neither was
// rejected; in both, a value still wanted was deleted and nothing reported
// it. A key is one value (docs/kvscheduler.md, the model): a value whose
// derived values clash with another's is INVALID, and the transaction
// that requests it fails naming the key.

// The adversary asked that two bases share a derived key (kept while one
// still derives it). Neither the reference (whose second base overwrites
// the derived node, and whose first base's delete removes it) nor the
// docs have a derived value of two bases; the scheduler now refuses the
// second base instead, so that nothing wanted is deleted under it.
func TestAdvDerivedKeyOfTwoBasesStaysWhileOneDerivesIt(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "d/shared", Value: v}}
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	register(t, s, b, d)
	err := set(t, s, "b/1", "v", "b/2", "v")
	var terr *kvscheduler.TransactionError
	if !errors.As(err, &terr) || len(terr.Invalid) != 1 || terr.Invalid[0].Key != "b/2" || !strings.Contains(err.Error(), "d/shared") {
		t.Fatalf("b/2 deriving d/shared, which b/1 derives: error %v, want b/2 INVALID naming d/shared", err)
	}
	wantOps(t, sb, "create b/1", "create d/shared")
	wantState(t, s, "b/2", kvscheduler.Invalid)

	err = set(t, s, "b/1", nil)
	if _, ok := sb.Values()["d/shared"]; !ok && err == nil && s.GetValueStatus("b/2").State == kvscheduler.Configured {
		t.Errorf("after deleting b/1 (ops %v, no error), d/shared is gone although b/2 (%s) still derives it; d/shared: %s",
			sb.OpStrings(), advState(s, "b/2"), advState(s, "d/shared"))
	}
	sb.ResetOps()
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// b/2 is requested again: d/shared is free, and b/2 takes it.
	if _, ok := sb.Values()["d/shared"]; !ok {
		t.Errorf("a downstream resync (ops %v) leaves d/shared, which b/2 derives, missing: %s", sb.OpStrings(), advState(s, "d/shared"))
	}
	wantState(t, s, "b/2", kvscheduler.Configured)
	advWantAgree(t, s, sb, "after the downstream resync", "b/", "d/")
}

func TestAdvRequestedKeyIsNotDeletedWithABaseDerivingIt(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "d/" + strings.TrimPrefix(key, "b/"), Value: v}}
	}
	register(t, s, b, sb.Descriptor("d", "d/"))
	mustSet(t, s, "d/1", "nb")
	err := set(t, s, "b/1", "v")
	t.Logf("b/1 deriving d/1: error %v, ops %v, d/1 %s", err, sb.OpStrings(), advState(s, "d/1"))
	sb.ResetOps()

	err = set(t, s, "b/1", nil) // the northbound still requests d/1
	_, still := sb.Values()["d/1"]
	if !still && err == nil {
		nb := s.DumpValues("", "d/", kvscheduler.NBView)
		t.Errorf("deleting b/1 (ops %v, no error) deleted d/1, which the northbound still requests (NB view %v); d/1: %s",
			sb.OpStrings(), nb, advState(s, "d/1"))
	}
	advWantAgree(t, s, sb, "after deleting b/1", "b/", "d/")
}

func TestAdvDuplicateDerivedKeyIsReportedNotFlapped(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(string, any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "d/1", Value: "a"}, {Key: "d/1", Value: "b"}} // a descriptor bug
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	register(t, s, b, d)
	rec, err := s.StartNBTransaction().SetValue("b/1", "v").Commit(ctx)
	if err != nil || len(rec.Errors) > 0 {
		return // reported: fine
	}
	sb.ResetOps()
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		return
	}
	if ops := sb.OpStrings(); len(ops) > 0 {
		t.Errorf("nothing reported the duplicate derived key, and a resync of the unchanged state ran %v", ops)
	}
}
