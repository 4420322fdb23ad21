package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// ownedObj is a value passed by pointer, as Kubernetes objects are.
type ownedObj struct{ V string }

// SetValue takes ownership of the object it is given (txn.go): a change is
// requested as a new object, a copy with the change, never by changing
// the requested one in place. This pins the supported way: the new object
// is compared with the held one and applied, and the southbound (which,
// as any real one, keeps a copy of what it is given) gets the change.
func TestSetValueOfANewObjectWithTheChangeIsApplied(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	create, update := a.Create, a.Update
	a.Create = func(ctx context.Context, k string, v any) (any, error) { return create(ctx, k, *v.(*ownedObj)) }
	a.Update = func(ctx context.Context, k string, old, v, md any) (any, error) {
		return update(ctx, k, old, *v.(*ownedObj), md)
	}
	a.ValueComparator = func(_ string, x, y any) bool {
		vx, _ := x.(*ownedObj)
		vy, _ := y.(*ownedObj)
		return vx != nil && vy != nil && vx.V == vy.V
	}
	register(t, s, a)
	obj := &ownedObj{V: "1"}
	mustSet(t, s, "a/1", obj)
	changed := *obj // the DeepCopy of a caller that wants a change
	changed.V = "2"
	err := set(t, s, "a/1", &changed)
	if got := sb.Values()["a/1"]; err != nil || got != (ownedObj{V: "2"}) {
		t.Fatalf("a/1 requested again as a new object with V=2: Commit %v, ops %v, the southbound holds %+v, the scheduler reports %s",
			err, sb.OpStrings(), got, advState(s, "a/1"))
	}
	if ops := sb.OpStrings(); len(ops) != 2 || ops[1] != "update a/1" {
		t.Fatalf("want [create a/1 update a/1], got %v", ops)
	}
	if obj.V != "1" {
		t.Fatalf("the scheduler changed the object it was given first: %+v", obj)
	}
}
