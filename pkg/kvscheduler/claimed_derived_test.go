package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// claimingDescriptor is the reference's standard setup (its mock
// descriptor over its mock southbound): the descriptor of "a/<name>"
// derives "a/<name>/d/<value>", a key its own KeySelector also selects.
// With baseOnly its Retrieve returns base values only (the reference's
// mock southbound, Lariat's documented contract); otherwise it returns
// the derived values too (kvtest's Retrieve returns every key it holds).
func claimingDescriptor(sb *kvtest.Southbound, baseOnly bool) *kvscheduler.Descriptor {
	d := sb.Descriptor("a", "a/")
	d.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		if strings.Contains(key, "/d/") {
			return nil // derived values derive nothing
		}
		return []kvscheduler.KeyValuePair{{Key: key + "/d/" + v.(string), Value: v}}
	}
	if baseOnly {
		retrieve := d.Retrieve
		d.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			all, err := retrieve(ctx, c)
			var out []kvscheduler.KVWithMetadata
			for _, kv := range all {
				if !strings.Contains(kv.Key, "/d/") {
					out = append(out, kv)
				}
			}
			return out, err
		}
	}
	return d
}

// Issue 25, case 1: a full resync over a southbound that already holds
// bases and their derived values, through a descriptor whose key selector
// claims its derived keys. The derived values are rebuilt from every
// retrieved base, whatever descriptor claims them, and a derived value
// the Retrieve also returns is the same value, not an error: the resync
// creates nothing that exists, deletes the derived values before their
// bases, deletes the derived value its base no longer derives, and
// reports what the southbound holds (issue 25's own scenario; the
// reference's is TestResyncWithNonEmptySB below).
func TestFullResyncOverExistingDerivedValuesClaimedByTheirDescriptor(t *testing.T) {
	for _, baseOnly := range []bool{true, false} {
		name := "RetrieveAlsoDerived"
		if baseOnly {
			name = "RetrieveBaseOnly"
		}
		t.Run(name, func(t *testing.T) {
			s := newSched(t, kvscheduler.Options{})
			sb := kvtest.New()
			register(t, s, claimingDescriptor(sb, baseOnly))
			for _, kv := range [][2]string{{"a/1", "x"}, {"a/2", "y"}, {"a/3", "z"}} {
				sb.Set(kv[0], kv[1], false)
				sb.Set(kv[0]+"/d/"+kv[1], kv[1], false)
			}
			txn := s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("a/1", "x").SetValue("a/3", "w")
			rec, err := txn.Commit(context.Background())
			if err != nil {
				t.Errorf("resync: %v", err)
			}
			if len(rec.Errors) > 0 {
				t.Errorf("resync recorded errors %v", rec.Errors)
			}
			wantOps(t, sb, "delete a/2/d/y", "delete a/2", "delete a/3/d/z", "update a/3", "create a/3/d/w")
			wantSB(t, sb, map[string]any{"a/1": "x", "a/1/d/x": "x", "a/3": "w", "a/3/d/w": "w"})
			for _, k := range []string{"a/1", "a/1/d/x", "a/3", "a/3/d/w"} {
				wantState(t, s, k, kvscheduler.Configured)
			}
			for _, k := range []string{"a/2", "a/2/d/y", "a/3/d/z"} {
				wantState(t, s, k, kvscheduler.NonExistent)
			}
		})
	}
}

// arrayDescriptor is the reference's mock descriptor with its array values
// (test.ArrayValueDerBuilder): "<prefix><name>" holds comma-separated items and
// derives "<prefix><name>/<item>" for each, keys its own selector claims.
// Retrieve returns base values only, as the reference's mock southbound.
func arrayDescriptor(sb *kvtest.Southbound, name, prefix string) *kvscheduler.Descriptor {
	d := sb.Descriptor(name, prefix)
	d.DerivedValues = arrayItems
	retrieve := d.Retrieve
	d.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		all, err := retrieve(ctx, c)
		var out []kvscheduler.KVWithMetadata
		for _, kv := range all {
			if strings.Count(kv.Key, "/") == 1 {
				out = append(out, kv)
			}
		}
		return out, err
	}
	return d
}

// Mirrors the reference's TestResyncWithNonEmptySB (resync_test.go): a
// startup resync over a southbound holding three bases with one derived
// item each; the second base's items depend on the first base and on its
// item1, which the resync removes; the third is updated by re-creation.
func TestResyncWithNonEmptySBClaimingDerived(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := arrayDescriptor(sb, "a", "a/")
	d.Dependencies = func(key string, _ any) []kvscheduler.Dependency {
		switch key {
		case "a/2/item1":
			return []kvscheduler.Dependency{{Key: "a/1"}}
		case "a/2/item2":
			return []kvscheduler.Dependency{{Key: "a/1/item1"}}
		}
		return nil
	}
	d.UpdateWithRecreate = func(key string, _, _, _ any) bool { return key == "a/3" }
	register(t, s, d)
	for _, b := range []string{"a/1", "a/2", "a/3"} {
		sb.Set(b, "item1", false)
		sb.Set(b+"/item1", "item1", false)
	}
	txn := s.StartNBTransaction().WithResync(kvscheduler.FullResync).
		SetValue("a/1", "item2").SetValue("a/2", "item1,item2").SetValue("a/3", "item1,item2")
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Errorf("resync: %v", err)
	}
	wantOps(t, sb, "delete a/3/item1", "delete a/3", "create a/3", "create a/3/item1", "create a/3/item2",
		"delete a/1/item1", "update a/1", "create a/1/item2", "update a/2")
	wantSB(t, sb, map[string]any{"a/1": "item2", "a/1/item2": "item2", "a/2": "item1,item2", "a/2/item1": "item1",
		"a/3": "item1,item2", "a/3/item1": "item1", "a/3/item2": "item2"})
	wantState(t, s, "a/2/item2", kvscheduler.Pending)
	wantState(t, s, "a/1/item1", kvscheduler.NonExistent)
	for _, k := range []string{"a/1", "a/1/item2", "a/2", "a/2/item1", "a/3", "a/3/item1", "a/3/item2"} {
		wantState(t, s, k, kvscheduler.Configured)
	}
}
