package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// adv18Descs returns descriptors on sb for the adv18 scenarios: "b" of
// base values b/N whose tag's "@K" parts derive d/K (value "dv-"+tag, no
// dependencies), "d" claiming the derived keys, "x" and "a" of plain
// values and "r" of values every update re-creates; all but d take their
// dependencies from the value as the adv5 fuzz does (fzParse:
// "tag|k1,~k2,p/*").
func adv18Descs(sb *kvtest.Southbound, recreateB bool) []*kvscheduler.Descriptor {
	deps := func(_ string, v any) []kvscheduler.Dependency { _, d := fzParse(v); return d }
	b := sb.Descriptor("b", "b/")
	b.Dependencies = deps
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		tag, _ := fzParse(v)
		var out []kvscheduler.KeyValuePair
		for _, part := range strings.Split(tag, "@")[1:] {
			out = append(out, kvscheduler.KeyValuePair{Key: "d/" + part, Value: "dv-" + tag})
		}
		return out
	}
	if recreateB {
		b.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	x := sb.Descriptor("x", "x/")
	x.Dependencies = deps
	a := sb.Descriptor("a", "a/")
	a.Dependencies = deps
	r := sb.Descriptor("r", "r/")
	r.Dependencies = deps
	r.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	return []*kvscheduler.Descriptor{b, d, x, a, r}
}

// TestAdv18DependentOfADerivedValueGoesBeforeItWhenItsBaseGoesPending:
// b/1 = v@1@2| derives d/1 and d/2; x/1 = w|~d/2 is ordered after d/2.
// One transaction updates b/1 to w@1@2|z/1 (the same derived keys, but
// it Requires z/1, which nothing provides: b/1's old value is deleted
// into PENDING, with d/1 and d/2) and x/1 to w|d/1,~d/2 (Requires d/1,
// which goes with b/1 and does not come back in the step: x/1 surely
// goes). x/1's value in the southbound is ordered after d/2, so it must
// be deleted before d/2 (docs/kvscheduler.md, the delete order), as it
// is when b/1 is re-created instead
// (TestAdv17ObtainedTakenOverGoesBeforeADerivedValueOfARecreatedBase,
// and this test with b re-creating passes). It failed with "d/2
// deleted before x/1 (w|~d/2), which depends on it and is deleted later
// in the same step (Commit <nil>, ops [delete d/1 delete d/2 delete b/1
// delete x/1])". Traced: the one question asked, mayBeMet(x/1, d/1),
// finds d/1 available and its base's delete not under way yet
// (leavesWithBase false), so x/1's update is not applied early; b/1's
// update is not known to leave, as updateLeaves knows it only for an
// update that drops derived values. Fixed: a derived value whose base's
// delete is under way goes unless that delete is a re-create (derivedGoes).
func TestAdv18DependentOfADerivedValueGoesBeforeItWhenItsBaseGoesPending(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, adv18Descs(sb, false)...)
	mustSet(t, s, "b/1", "v@1@2|", "x/1", "w|~d/2")
	wantState(t, s, "d/2", kvscheduler.Configured)
	wantState(t, s, "x/1", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("b/1", "w@1@2|z/1").SetValue("x/1", "w|d/1,~d/2").Commit(context.Background())
	ops := sb.Ops(false)
	advWantAgree(t, s, sb, "after the transaction", "b/", "d/", "x/")
	wantState(t, s, "b/1", kvscheduler.Pending)
	wantState(t, s, "x/1", kvscheduler.Pending)
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
}

// TestAdv18ValueInvalidForAClashGoesBeforeWhatItIsOrderedAfter (adv5
// fuzz seed 2003028 of -fzretry -fzdd -fzdheld -fzcancel -fzcancelall
// -fzview -fzrec -fzorder, reduced): d/1 is the southbound's own
// (OBTAINED, read by a full resync); b/2 = w|~a/3 derives nothing and is
// ordered after a/3 = w|r/1, which Requires r/1 = v|. One transaction
// deletes a/3, updates b/2 to v@1| (it derives d/1: INVALID for the
// clash with the southbound's d/1, so its value is deleted) and
// re-creates r/1 as v|r/2 (PENDING: nothing provides r/2). b/2 is
// ordered after a/3 and goes in the same transaction, so it must go
// first (docs/kvscheduler.md, the delete order: a dependent that a
// request further on takes away, by an update into INVALID, goes before
// what it is ordered after). Without r/1's re-create, or with b/2's
// update going into PENDING (v|z/9, nothing provides z/9) instead of
// INVALID for the clash, the order held. It failed with "a/3 deleted
// before b/2 (w|~a/3), which depends on it and is deleted later in the
// same step"; fixed: valueGoes asks derivationErr's clash rule
// (clashStaysFor).
func TestAdv18ValueInvalidForAClashGoesBeforeWhatItIsOrderedAfter(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, adv18Descs(sb, false)...)
	sb.Set("d/1", "x", true)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).
		SetValue("a/3", "w|r/1").SetValue("b/2", "w|~a/3").SetValue("r/1", "v|").Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, "d/1", kvscheduler.Obtained)
	wantState(t, s, "a/3", kvscheduler.Configured)
	wantState(t, s, "b/2", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("a/3", nil).SetValue("b/2", "v@1|").SetValue("r/1", "v|r/2").Commit(context.Background())
	ops := sb.Ops(false)
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "r/")
	wantState(t, s, "b/2", kvscheduler.Invalid)
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
}

// adv18WithProperties makes base descriptor b derive, with each d/K, the
// property p/K (a derived value no descriptor claims).
func adv18WithProperties(b *kvscheduler.Descriptor) {
	derived := b.DerivedValues
	b.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		out := derived(k, v)
		for _, kv := range out {
			out = append(out, kvscheduler.KeyValuePair{Key: "p/" + strings.TrimPrefix(kv.Key, "d/"), Value: "prop"})
		}
		return out
	}
}

// TestAdv18UpdateRequiringItsOwnObsoletePropertyLeavesAsOne (adv5 fuzz
// seed 2007070 of -fzretry -fzdd -fzcancel -fzview -fzsnap -fzrec
// -fzorder -fzprops -fzinv, reduced): b/1 = v@1@2| derives d/1, d/2 and
// the properties p/1, p/2; x/1 = w|d/*,~d/1 Requires any d/ key and is
// ordered after d/1. One transaction updates b/1 to w@2|p/1: it drops
// d/1 and p/1, and Requires p/1, its own obsolete property, so it is not
// ready and b/1 goes into PENDING with d/2; x/1 goes with it. x/1 is
// ordered after d/1, so it must go before d/1 (docs/kvscheduler.md, the
// delete order: an update that drops derived values and whose new value
// is not ready leaves as one delete into PENDING, updateLeaves). With
// w@2|d/1 (Requiring its own obsolete d/1, which a descriptor claims)
// the order holds: x/1 goes first. It failed with "d/1 deleted before
// x/1 (w|d/*,~d/1), which depends on it and is deleted later in the same
// step"; fixed: a value's own obsolete derived values provide nothing to
// its new value (needsObsolete, mayBeMet).
func TestAdv18UpdateRequiringItsOwnObsoletePropertyLeavesAsOne(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	ds := adv18Descs(sb, false)
	adv18WithProperties(ds[0])
	register(t, s, ds...)
	mustSet(t, s, "b/1", "v@1@2|", "x/1", "w|d/*,~d/1")
	wantState(t, s, "x/1", kvscheduler.Configured)
	wantState(t, s, "p/1", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("b/1", "w@2|p/1").Commit(context.Background())
	ops := sb.Ops(false)
	advWantAgree(t, s, sb, "after the transaction", "b/", "d/", "x/")
	wantState(t, s, "b/1", kvscheduler.Pending)
	wantState(t, s, "x/1", kvscheduler.Pending)
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("%s (Commit %v, ops %v)", msg, err, sb.OpStrings())
	}
}
