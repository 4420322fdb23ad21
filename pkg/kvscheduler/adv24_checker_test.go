package kvscheduler_test

import (
	"flag"
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
