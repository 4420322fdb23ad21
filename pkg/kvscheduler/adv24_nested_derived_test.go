package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// adv24Nested returns the fuzz's descriptors "a" and "r" (values
// "tag|deps", see fzParse) and a chain of derivations: base "b/N" derives
// "d/N" with value "dv-<tag>", and "d/N" derives in turn "e/N" only
// while its tag has an "x" in it, with value "ev|<deps>", deps what
// follows a ":" in the tag (b/1 = x:~a/1| derives d/1 = dv-x:~a/1, which
// derives e/1 = ev|~a/1). So a base's update can take a derived value of
// a derived value away while keeping its own derived key.
func adv24Nested(sb *kvtest.Southbound) []*kvscheduler.Descriptor {
	deps := func(_ string, v any) []kvscheduler.Dependency { _, d := fzParse(v); return d }
	a := sb.Descriptor("a", "a/")
	a.Dependencies = deps
	r := sb.Descriptor("r", "r/")
	r.Dependencies = deps
	b := sb.Descriptor("b", "b/")
	b.Dependencies = deps
	b.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		tag, _ := fzParse(v)
		return []kvscheduler.KeyValuePair{{Key: "d/" + strings.TrimPrefix(k, "b/"), Value: "dv-" + tag}}
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	d.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		s, _ := v.(string)
		tag, edeps, _ := strings.Cut(s, ":")
		if strings.Contains(tag, "x") {
			return []kvscheduler.KeyValuePair{{Key: "e/" + strings.TrimPrefix(k, "d/"), Value: "ev|" + edeps}}
		}
		return nil
	}
	e := sb.Descriptor("e", "e/")
	e.NBKeyPrefix = ""
	e.Dependencies = deps
	return []*kvscheduler.Descriptor{a, r, b, d, e}
}

// TestAdv24CascadeOfANestedDerivedProviderGoesFirst: r/1 = v|~a/1,e/1 is
// ordered after a/1 and Requires e/1, which d/1 derives, d/1 itself
// derived from b/1 = x|. One transaction deletes a/1 and updates b/1 to
// y|: b/1 still derives d/1, but d/1 = dv-y| no longer derives e/1, so
// the Requires cascade takes r/1 down later in the transaction. The
// delete order (docs/safety.md: "a value ordered after another that the
// transaction deletes is deleted before it also when the Requires
// cascade of a later request takes it away ... for a derived provider,
// its base's update that no longer derives it") wants r/1 down before
// a/1 goes. The prediction asks only whether the provider's direct base
// (d/1, which has no request) drops it, not whether the request of the
// base above changes d/1 so that it drops it.
func TestAdv24CascadeOfANestedDerivedProviderGoesFirst(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, adv24Nested(sb)...)
	mustSet(t, s, "a/1", "v|", "b/1", "x|", "r/1", "v|~a/1,e/1")
	wantState(t, s, "e/1", kvscheduler.Configured)
	wantState(t, s, "r/1", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	if _, err := s.StartNBTransaction().SetValue("a/1", nil).SetValue("b/1", "y|").Commit(context.Background()); err != nil {
		t.Fatalf("Commit: %v (ops %v)", err, sb.OpStrings())
	}
	wantState(t, s, "r/1", kvscheduler.Pending)
	wantState(t, s, "e/1", kvscheduler.NonExistent)
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "e/", "r/")
}

// TestAdv24NestedDerivedValueOrderedAfterADeletedValueGoesFirst: e/1 =
// ev|~a/1, ordered after a/1, is derived from d/1, itself derived from
// b/1 = x:~a/1|. One transaction deletes a/1 and updates b/1 to y|: b/1
// still derives d/1, but d/1 = dv-y| no longer derives e/1, so b/1's
// update takes e/1 away further on. A value is deleted after the values
// that depend on it and that the transaction deletes (docs/safety.md,
// the delete order): e/1 must go before a/1.
func TestAdv24NestedDerivedValueOrderedAfterADeletedValueGoesFirst(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, adv24Nested(sb)...)
	mustSet(t, s, "a/1", "v|", "b/1", "x:~a/1|")
	wantState(t, s, "e/1", kvscheduler.Configured)
	before := sb.Values()
	sb.ResetOps()
	if _, err := s.StartNBTransaction().SetValue("a/1", nil).SetValue("b/1", "y|").Commit(context.Background()); err != nil {
		t.Fatalf("Commit: %v (ops %v)", err, sb.OpStrings())
	}
	wantState(t, s, "e/1", kvscheduler.NonExistent)
	if msg := fzCheckDeleteOrder(before, sb.Ops(false)); msg != "" {
		t.Errorf("%s (ops %v)", msg, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "e/", "r/")
}

// TestAdv24NestedDerivedProviderThatStaysKeepsItsDependent: as
// TestAdv24CascadeOfANestedDerivedProviderGoesFirst, but b/1's update to
// xz| still derives d/1 = dv-xz|, which still derives e/1: nothing takes
// e/1 away, so r/1 = v|~a/1,e/1 stays, untouched, while a/1 goes (an
// ordering-only dependency stays when what it names goes).
func TestAdv24NestedDerivedProviderThatStaysKeepsItsDependent(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, adv24Nested(sb)...)
	mustSet(t, s, "a/1", "v|", "b/1", "x|", "r/1", "v|~a/1,e/1")
	sb.ResetOps()
	if _, err := s.StartNBTransaction().SetValue("a/1", nil).SetValue("b/1", "xz|").Commit(context.Background()); err != nil {
		t.Fatalf("Commit: %v (ops %v)", err, sb.OpStrings())
	}
	wantState(t, s, "r/1", kvscheduler.Configured)
	for _, o := range sb.Ops(false) {
		if o.Key == "r/1" || o.Key == "e/1" && o.Operation != "update" {
			t.Errorf("%s: nothing takes it away (ops %v)", o, sb.OpStrings())
		}
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/", "e/", "r/")
}
