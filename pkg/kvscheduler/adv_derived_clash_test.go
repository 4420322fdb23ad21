package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Keys claimed twice: a derived key that two bases derive, and a key that
// is both requested by the northbound and derived from a base. Neither is
// rejected; in both, a value still wanted is deleted and nothing reports
// it.

func TestAdvDerivedKeyOfTwoBasesStaysWhileOneDerivesIt(t *testing.T) {
	advOpen(t, "two bases deriving the same key: deleting one base deletes the shared derived value while the other base, CONFIGURED, still derives it; nothing reports it missing and a downstream resync does not re-create it")
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
	if err := set(t, s, "b/1", "v", "b/2", "v"); err != nil {
		t.Fatal(err)
	}
	wantOps(t, sb, "create b/1", "create d/shared", "create b/2")

	err := set(t, s, "b/1", nil)
	if _, ok := sb.Values()["d/shared"]; !ok && err == nil {
		t.Errorf("after deleting b/1 (ops %v, no error), d/shared is gone although b/2 (%s) still derives it; d/shared: %s",
			sb.OpStrings(), advState(s, "b/2"), advState(s, "d/shared"))
	}
	sb.ResetOps()
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := sb.Values()["d/shared"]; !ok {
		t.Errorf("a downstream resync (ops %v) leaves d/shared, which b/2 derives, missing: %s", sb.OpStrings(), advState(s, "d/shared"))
	}
	advWantAgree(t, s, sb, "after the downstream resync", "b/", "d/")
}

func TestAdvRequestedKeyIsNotDeletedWithABaseDerivingIt(t *testing.T) {
	advOpen(t, "a key the northbound requests and a base also derives: deleting the base deletes the value the northbound still requests, with no error, and reports it NONEXISTENT")
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
	advOpen(t, "DerivedValues returning one key twice with two values is neither rejected nor reported: the value is created then updated, and every resync of the unchanged state updates it twice")
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
