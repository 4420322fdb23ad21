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
// "d/N" with value "dv-<tag>", and "d/N" derives in turn "e/N" ("ev")
// only while its tag has an "x" in it. So a base's update can take a
// derived value of a derived value away while keeping its own derived
// key.
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
		if s, _ := v.(string); strings.Contains(s, "x") {
			return []kvscheduler.KeyValuePair{{Key: "e/" + strings.TrimPrefix(k, "d/"), Value: "ev"}}
		}
		return nil
	}
	e := sb.Descriptor("e", "e/")
	e.NBKeyPrefix = ""
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
	advOpen(t, "issue 25: the cascade of a nested derived provider's removal is not predicted: a/1 goes before r/1, ordered after it")
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
