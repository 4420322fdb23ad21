package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// adv5Obj is a value passed by pointer, as Kubernetes objects are.
type adv5Obj struct{ V string }

// The comparator is skipped for the same pointer twice ("most values ...
// are the very pointers applied before", guard.go safeEqual), and
// dependencies and derived values are cached by identity (depsFor,
// derivedFor). Nothing in the API or the docs says a requested value must
// not change afterwards. A caller that changes the object it requested
// and requests it again gets no update: Commit returns nil, the value is
// CONFIGURED, and the scheduler's SB view shows the new content (it holds
// the caller's pointer), while the southbound (which, as any real one,
// keeps what it was given, not the caller's object) holds the old.

func TestAdv5ValueChangedInPlaceAndRequestedAgainIsApplied(t *testing.T) {
	advOpen(t, "a value changed in place (same pointer) and requested again is taken as equal: no update, while the SB view shows the change")
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	// The southbound keeps a copy of what it is given.
	create, update := a.Create, a.Update
	a.Create = func(ctx context.Context, k string, v any) (any, error) { return create(ctx, k, *v.(*adv5Obj)) }
	a.Update = func(ctx context.Context, k string, old, v, md any) (any, error) {
		return update(ctx, k, old, *v.(*adv5Obj), md)
	}
	a.ValueComparator = func(_ string, x, y any) bool {
		vx, _ := x.(*adv5Obj)
		vy, _ := y.(*adv5Obj)
		return vx != nil && vy != nil && vx.V == vy.V
	}
	register(t, s, a)
	obj := &adv5Obj{V: "1"}
	mustSet(t, s, "a/1", obj)
	obj.V = "2"
	err := set(t, s, "a/1", obj)
	got := sb.Values()["a/1"]
	if got != (adv5Obj{V: "2"}) {
		t.Fatalf("a/1 requested again with V=2: Commit %v, ops %v, the southbound holds %+v, the scheduler reports %s with %+v",
			err, sb.OpStrings(), got, advState(s, "a/1"), s.DumpValues("", "a/1", kvscheduler.SBView)[0].Value)
	}
}
