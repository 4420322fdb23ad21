package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

func TestDerivedValuesAndMetadata(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	ifd := sb.Descriptor("if", "if/")
	ifd.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		name := strings.TrimPrefix(key, "if/")
		return []kvscheduler.KeyValuePair{{Key: "addr/" + name, Value: v}, {Key: "prop/up/" + name, Value: true}}
	}
	register(t, s, ifd, sb.Descriptor("addr", "addr/"), withDeps(sb.Descriptor("route", "route/")))
	mustSet(t, s, "route/1", "r|prop/up/a", "if/a", "x")
	wantOps(t, sb, "create if/a", "create addr/a", "create route/1")
	wantState(t, s, "addr/a", kvscheduler.Configured)
	if st := wantState(t, s, "prop/up/a", kvscheduler.Configured); !st.Derived {
		t.Fatalf("property not derived: %+v", st)
	}
	mm, ok := s.MetadataMap("if")
	if !ok {
		t.Fatal("no metadata map")
	}
	if md, ok := mm.Get("a"); !ok || md.(int) <= 0 {
		t.Fatalf("metadata %v %v", md, ok)
	}
	mustSet(t, s, "if/a", nil)
	// The derived values go first, in key order; the route goes with the
	// property it depends on, before the interface.
	wantOps(t, sb, "delete addr/a", "delete route/1", "delete if/a")
	wantState(t, s, "if/a", kvscheduler.NonExistent)
	wantState(t, s, "addr/a", kvscheduler.NonExistent)
	if st := wantState(t, s, "route/1", kvscheduler.Pending); !reflect.DeepEqual(st.UnmetDependencies, []string{"prop/up/a"}) {
		t.Fatalf("unmet %v", st.UnmetDependencies)
	}
	if _, ok := mm.Get("a"); ok {
		t.Fatal("metadata not removed")
	}
}

func TestPendingUntilDependencyAppears(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "b/1", "v|a/1", "b/2", "v|a/*")
	st := wantState(t, s, "b/1", kvscheduler.Pending)
	if !reflect.DeepEqual(st.UnmetDependencies, []string{"a/1"}) {
		t.Fatalf("unmet %v", st.UnmetDependencies)
	}
	wantOps(t, sb)
	mustSet(t, s, "a/1", "x")
	wantOps(t, sb, "create a/1", "create b/1", "create b/2")
	wantState(t, s, "b/1", kvscheduler.Configured)
	mustSet(t, s, "a/1", nil)
	// Dependents go first, in key order.
	wantOps(t, sb, "delete b/1", "delete b/2", "delete a/1")
	wantState(t, s, "b/1", kvscheduler.Pending)
	wantState(t, s, "b/2", kvscheduler.Pending)
}

func TestOperationOrdering(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := withDeps(sb.Descriptor("a", "a/"))
	a.UpdateWithRecreate = func(_ string, _, n any, _ any) bool { return strings.HasPrefix(n.(string), "R") }
	register(t, s, a)
	mustSet(t, s, "a/1", "v1", "a/2", "v1", "a/3", "v1")
	sb.ResetOps()
	mustSet(t, s, "a/3", "v2", "a/6", "x|a/5", "a/5", "x", "a/2", "Rv2", "a/1", nil)
	wantOps(t, sb, "delete a/1", "delete a/2", "create a/2", "create a/5", "create a/6", "update a/3")
}

func TestRevertOnFailure(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "v1", "a/2", "v1")
	sb.ResetOps()
	sb.FailNext("update", "a/1", errors.New("boom"))
	_, err := s.StartNBTransaction().SetValue("a/1", "v2").SetValue("a/3", "new").SetValue("a/2", nil).
		WithRevert().Commit(context.Background())
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || !te.Reverted || len(te.Failed) != 1 || te.Failed[0].Key != "a/1" ||
		te.Failed[0].Operation != kvscheduler.OpUpdate {
		t.Fatalf("error %v", err)
	}
	// Reverse order of application: a/3 was created after a/2 was deleted.
	wantOps(t, sb, "delete a/2", "create a/3", "update a/1", "delete a/3", "create a/2")
	wantSB(t, sb, map[string]any{"a/1": "v1", "a/2": "v1"})
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantState(t, s, "a/2", kvscheduler.Configured)
	wantState(t, s, "a/3", kvscheduler.NonExistent)
}

func TestDependencyCycle(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("c", "c/")))
	mustSet(t, s, "c/1", "x|c/2", "c/2", "x|c/1,a/ext")
	wantState(t, s, "c/1", kvscheduler.Pending)
	if st := wantState(t, s, "c/2", kvscheduler.Pending); !reflect.DeepEqual(st.UnmetDependencies, []string{"c/1", "a/ext"}) {
		t.Fatalf("unmet %v", st.UnmetDependencies)
	}
	mustSet(t, s, "a/ext", "x")
	wantSB(t, sb, map[string]any{"a/ext": "x", "c/1": "x|c/2", "c/2": "x|c/1,a/ext"})
	wantState(t, s, "c/1", kvscheduler.Configured)
	wantState(t, s, "c/2", kvscheduler.Configured)
	mustSet(t, s, "a/ext", nil)
	wantSB(t, sb, nil)
	wantState(t, s, "c/1", kvscheduler.Pending)
}

func TestFailedDeleteOfDerivedValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	ifd := sb.Descriptor("if", "if/")
	ifd.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "addr/" + strings.TrimPrefix(key, "if/"), Value: v}}
	}
	register(t, s, ifd, sb.Descriptor("addr", "addr/"))
	mustSet(t, s, "if/a", "x")
	sb.ResetOps()
	sb.FailNext("delete", "addr/a", errors.New("busy"))
	err := set(t, s, "if/a", nil)
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || te.Failed[0].Key != "addr/a" || te.Failed[0].Operation != kvscheduler.OpDelete {
		t.Fatalf("error %v", err)
	}
	// The base is not deleted under a derived value that still exists:
	// both are FAILED until repaired.
	wantOps(t, sb, "delete addr/a")
	st := wantState(t, s, "addr/a", kvscheduler.Failed)
	if st.LastOp != kvscheduler.OpDelete || st.Error == nil {
		t.Fatalf("status %+v", st)
	}
	if st := wantState(t, s, "if/a", kvscheduler.Failed); !strings.Contains(fmt.Sprint(st.Error), "addr/a") {
		t.Fatalf("base status %+v", st)
	}
	mustSet(t, s)
	wantOps(t, sb)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantSB(t, sb, nil)
	wantState(t, s, "addr/a", kvscheduler.NonExistent)
}

func TestFailedRecreate(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.Update = nil // every change re-creates
	register(t, s, a, withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "a/1", "v1", "b/1", "x|a/1")
	sb.ResetOps()
	sb.FailNext("create", "a/1", errors.New("boom"))
	err := set(t, s, "a/1", "v2")
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || te.Failed[0].Operation != kvscheduler.OpCreate {
		t.Fatalf("error %v", err)
	}
	wantOps(t, sb, "delete b/1", "delete a/1", "create a/1")
	st := wantState(t, s, "a/1", kvscheduler.Failed)
	if st.LastOp != kvscheduler.OpCreate {
		t.Fatalf("status %+v", st)
	}
	wantState(t, s, "b/1", kvscheduler.Pending)
	mustSet(t, s, "a/1", "v3")
	wantOps(t, sb, "create a/1", "create b/1")
	wantState(t, s, "a/1", kvscheduler.Configured)
}

func TestValidationAndFix(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.Validate = func(_ string, v any) error {
		if v == "bad" {
			return kvscheduler.NewInvalidValueError(errors.New("name must not be bad"), "name")
		}
		return nil
	}
	register(t, s, a)
	wantInvalid(t, set(t, s, "a/1", "bad"), "a/1")
	st := wantState(t, s, "a/1", kvscheduler.Invalid)
	if !reflect.DeepEqual(st.InvalidFields, []string{"name"}) {
		t.Fatalf("fields %v", st.InvalidFields)
	}
	wantOps(t, sb)
	mustSet(t, s, "a/1", "good")
	wantOps(t, sb, "create a/1")
	wantState(t, s, "a/1", kvscheduler.Configured)
}

func TestUnimplementedAppliedOnRegistration(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	mustSet(t, s, "a/1", "x")
	wantState(t, s, "a/1", kvscheduler.Unimplemented)
	register(t, s, sb.Descriptor("a", "a/"))
	wantOps(t, sb, "create a/1")
	wantState(t, s, "a/1", kvscheduler.Configured)
}

func TestNonBlockingCommit(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	rec, err := s.StartNBTransaction().SetValue("a/1", "x").NonBlocking().Commit(context.Background())
	if rec != nil || err != nil {
		t.Fatalf("non-blocking commit returned %v %v", rec, err)
	}
	barrier(t, s)
	wantSB(t, sb, map[string]any{"a/1": "x"})
}

// TestSamePointerIsEqualWithoutTheComparator checks that the comparator is
// not asked about a value that is the very pointer applied before: every
// transaction plans the whole graph, and rich comparators are costly.
func TestSamePointerIsEqualWithoutTheComparator(t *testing.T) {
	type obj struct{ v string }
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("o", "o/")
	calls := map[string]int{}
	d.ValueComparator = func(key string, a, b any) bool {
		calls[key]++ // the scheduler calls it from its one goroutine
		return a.(*obj).v == b.(*obj).v
	}
	register(t, s, d)
	kept := &obj{"a"}
	ctx := context.Background()
	if _, err := s.StartNBTransaction().SetValue("o/kept", kept).SetValue("o/other", &obj{"1"}).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The second transaction changes only o/other; o/kept is planned again.
	if _, err := s.StartNBTransaction().SetValue("o/other", &obj{"2"}).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if calls["o/kept"] != 0 {
		t.Errorf("the comparator was asked %d times about an unchanged pointer", calls["o/kept"])
	}
	if calls["o/other"] == 0 {
		t.Error("the comparator was never asked about a changed value")
	}
	// An equal value in a new pointer still goes to the comparator, and
	// causes no update.
	if _, err := s.StartNBTransaction().SetValue("o/kept", &obj{"a"}).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if calls["o/kept"] == 0 {
		t.Error("a new pointer was not compared")
	}
	wantState(t, s, "o/kept", kvscheduler.Configured)
}
