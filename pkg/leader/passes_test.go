package leader

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// TestPassesOfSeveralFactoriesKeepTheOldestPrecondition: one factory's
// pass over an object never moves the version another pass's writes are
// conditional on, whichever started first; a write moves only the version
// of the one pass that held its precondition.
func TestPassesOfSeveralFactoriesKeepTheOldestPrecondition(t *testing.T) {
	obj := controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "c"}
	tbl := &passTable{}
	want := func(step, rv string) {
		t.Helper()
		got, ok, _ := tbl.expected(obj)
		if rv == "" {
			if ok {
				t.Fatalf("%s: writes conditional on %q, want unconditional", step, got)
			}
			return
		}
		if !ok || got != rv {
			t.Fatalf("%s: writes conditional on %q (tracked %v), want %q", step, got, ok, rv)
		}
	}
	slow := tbl.Handling(obj, "10")
	want("one pass", "10")
	tbl.wrote(obj, "10", "11")
	want("the pass's own write", "11")
	other := tbl.Handling(obj, "12")
	want("a newer pass started after", "11")
	tbl.wrote(obj, "11", "13")
	want("a write conditional on the older pass's version", "12")
	other()
	want("the newer pass ended", "13")
	lagging := tbl.Handling(obj, "9")
	want("an older copy handled later", "9")
	lagging()
	same := tbl.Handling(obj, "13")
	tbl.wrote(obj, "13", "14")
	want("a write two passes held the precondition of", "13")
	same()
	slow()
	want("no pass", "")
}

// TestPassOfAnEndedTermIsStale: a pass that began in a term that has
// ended makes writes of its object stale, in the next term too, until it
// ends; a pass of the term under way does not.
func TestPassOfAnEndedTermIsStale(t *testing.T) {
	obj := controller.ObjectRef{Resource: "configmaps", Namespace: "n", Name: "c"}
	tbl := &passTable{}
	stale := func() bool {
		_, _, s := tbl.expected(obj)
		return s
	}
	tbl.beginTerm()
	old := tbl.Handling(obj, "10")
	if stale() {
		t.Fatal("a pass of the term under way is stale")
	}
	tbl.endTerm()
	if !stale() {
		t.Fatal("a pass that outlived its term is not stale")
	}
	tbl.beginTerm()
	if !stale() {
		t.Fatal("a pass of the last term is not stale in the next")
	}
	old()
	done := tbl.Handling(obj, "11")
	if stale() {
		t.Fatal("a pass of the new term is stale once the old pass ended")
	}
	done()
}
