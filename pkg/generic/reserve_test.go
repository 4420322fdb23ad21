package generic

import "testing"

// TestReserveKeepsANameForItsFirstHolder: the first to reserve a name
// keeps it, a second reservation (by another, or by itself) is refused and
// told who holds it, and a release by another than the holder does not
// free it.
func TestReserveKeepsANameForItsFirstHolder(t *testing.T) {
	f := &Factory{}
	if holder, ok := f.Reserve("cond", "one"); !ok || holder != "one" {
		t.Fatalf("first Reserve = %q, %v; want one, true", holder, ok)
	}
	for _, by := range []string{"two", "one"} {
		if holder, ok := f.Reserve("cond", by); ok || holder != "one" {
			t.Errorf("Reserve by %s = %q, %v; want one, false", by, holder, ok)
		}
	}
	f.Release("cond", "two")
	if _, ok := f.Reserve("cond", "two"); ok {
		t.Error("a release by another than the holder freed the name")
	}
	f.Release("cond", "one")
	if holder, ok := f.Reserve("cond", "two"); !ok || holder != "two" {
		t.Errorf("Reserve after the holder's release = %q, %v; want two, true", holder, ok)
	}
}
