package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A descriptor registered after values exist must not take over keys that
// already have a value: one of another descriptor, a property (a derived
// value without descriptor) or a key the southbound notified. The
// registration is refused naming the keys, and nothing changes; keys only
// requested (UNIMPLEMENTED) are still taken over and applied.
func TestLateDescriptorClaimingValuesIsRefused(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	x := sb.Descriptor("x", "x/")
	x.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "p/" + strings.TrimPrefix(key, "x/"), Value: v}}
	}
	register(t, s, x)
	mustSet(t, s, "x/1", "a") // p/1 is its property
	if err := s.PushSBNotification("link/1", "up", nil); err != nil {
		t.Fatal(err)
	}
	if err := set(t, s, "u/1", "v"); err != nil { // no descriptor: UNIMPLEMENTED
		t.Fatal(err)
	}
	barrier(t, s)
	for _, tc := range []struct{ prefix, key string }{{"x/", "x/1"}, {"p/", "p/1"}, {"link/", "link/1"}} {
		late := sb.Descriptor("late-"+strings.TrimSuffix(tc.prefix, "/"), "")
		late.KeySelector = func(k string) bool { return strings.HasPrefix(k, tc.prefix) }
		err := s.RegisterDescriptor(ctx, late)
		if !errors.Is(err, kvscheduler.ErrInvalidDescriptor) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("registering a descriptor claiming %s: %v, want an ErrInvalidDescriptor naming %s", tc.key, err, tc.key)
		}
	}
	register(t, s, sb.Descriptor("u", "u/"))
	wantState(t, s, "u/1", kvscheduler.Configured)
	mustSet(t, s, "x/1", nil)
	if got := sb.Values(); len(got) != 1 || got["u/1"] != "v" {
		t.Errorf("after deleting x/1 the southbound holds %v, want only u/1", got)
	}
}
