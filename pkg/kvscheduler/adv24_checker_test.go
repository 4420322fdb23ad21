package kvscheduler_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// fzRevertAll makes every NB transaction of the adv5 fuzz revert (the
// seeds draw as without it), to attack the revert's order.
var fzRevertAll = flag.Bool("fzrevertall", false, "every NB transaction with revert")

// fzHeldDeps returns the dependencies the fuzz's descriptors give value v
// of key: a derived d/ value has none unless -fzdd, and then only its
// exact keys other than its own (see fzDescs). The delete order's check
// judges a value by these, not by the text of a value the drift set (adv5
// fuzz seeds 8001597 and 8021374 of -fzorder alone: d/2 drift-set to
// v|r/2 was judged to depend on r/2, which the d descriptor never says).
func fzHeldDeps(key string, v any) []kvscheduler.Dependency {
	_, deps := fzParse(v)
	if len(key) < 2 || key[:2] != "d/" {
		return deps
	}
	if !*fzDerivedDeps {
		return nil
	}
	var out []kvscheduler.Dependency
	for _, d := range deps {
		if d.Key != key && d.Key != "" {
			out = append(out, d)
		}
	}
	return out
}

// TestAdv24DeleteOrderCheckGoesByTheDescriptorsDependencies: the delete
// order's check does not count as a dependent a d/ value whose text names
// the value deleted first when the d descriptor declares no dependencies
// (no -fzdd), and does with -fzdd.
func TestAdv24DeleteOrderCheckGoesByTheDescriptorsDependencies(t *testing.T) {
	before := map[string]any{"r/2": "v|", "d/2": "v|r/2"}
	ops := []kvtest.Op{{Operation: "delete", Key: "r/2"}, {Operation: "delete", Key: "d/2"}}
	if msg := fzCheckDeleteOrder(before, ops); msg != "" {
		t.Errorf("without -fzdd: %s", msg)
	}
	withFzFlags(t, fzDerivedDeps)
	if msg := fzCheckDeleteOrder(before, ops); msg == "" {
		t.Errorf("with -fzdd: r/2 deleted before d/2 = v|r/2 not found")
	}
}

// fzCreateOrder makes the adv5 fuzz check, in steps without injected
// failures, that no value is created (or updated) while a key one of its
// dependencies names exactly is absent: a create comes after its
// dependencies' creates (an OrderingOnly dependent waits, PENDING, for
// what it names; docs/kvscheduler.md, "Two kinds of dependency"). An
// update is judged by its Requires dependencies only (an OrderingOnly
// dependent stays and is updated in place when what it names goes).
var fzCreateOrder = flag.Bool("fzcorder", false, "check that no value is created before what it depends on")

// fzCheckCreateOrder checks ops (one step, from the southbound's values
// before) as fzCreateOrder says. A key in unseen (drift the scheduler
// has not read) is not judged, nor is a dependency in a cycle with the
// value, held, created or wanted (members of a cycle are created
// together, and go back to PENDING when one cannot be).
func fzCheckCreateOrder(before map[string]any, ops []kvtest.Op, unseen, wanted map[string]any) string {
	held := map[string]any{}
	// step: every value the step holds at some point, and the wanted
	// ones (a cycle's member that could not be created), for the cycles.
	step := map[string]any{}
	alt := map[string]any{} // a second value fzReaches follows too
	for k, v := range unseen {
		alt[k] = v
	}
	for k, v := range wanted {
		if alt[k] == nil {
			alt[k] = v
		}
	}
	for k, v := range before {
		held[k], step[k] = v, v
	}
	for _, o := range ops {
		if o.Err == nil && (o.Operation == "create" || o.Operation == "update") {
			step[o.Key] = o.Value
		}
	}
	gone := map[string]bool{} // deleted in the step: a create re-creates
	for _, o := range ops {
		if o.Err != nil {
			continue
		}
		switch o.Operation {
		case "delete":
			delete(held, o.Key)
			gone[o.Key] = true
			continue
		case "create", "update":
		default:
			continue
		}
		for _, d := range fzHeldDeps(o.Key, o.Value) {
			if d.Key == "" || d.Key == o.Key || o.Operation == "update" && d.Kind != kvscheduler.Requires {
				continue
			}
			if _, ok := held[d.Key]; ok {
				continue
			}
			if _, drifted := unseen[d.Key]; drifted || strings.HasPrefix(d.Key, "n/") || strings.HasPrefix(d.Key, "p/") {
				continue
			}
			if fzReaches(step, alt, d.Key, o.Key) {
				continue
			}
			kind := ""
			if gone[o.Key] && o.Operation == "create" && d.Kind == kvscheduler.OrderingOnly {
				// documented: a re-create is an update in place for its
				// ordering-only dependencies
				// (TestAdv27ReCreateOrderedAfterAnAbsentValueIsAnUpdateInPlace)
				kind = "(re-create) "
			}
			return fmt.Sprintf("%s%s %s (%v) while %s, which it depends on, is absent", kind, o.Operation, o.Key, o.Value, d.Key)
		}
		held[o.Key] = o.Value
	}
	return ""
}

// fzNBView returns the scheduler's northbound view: the requests it holds
// (a reverted transaction's are not among them).
func fzNBView(s *kvscheduler.Scheduler) map[string]any {
	out := map[string]any{}
	for _, kv := range s.DumpValues("", "", kvscheduler.NBView) {
		out[kv.Key] = kv.Value
	}
	return out
}
