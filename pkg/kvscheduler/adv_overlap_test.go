package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A descriptor registered after values exist, whose KeySelector claims
// their keys too (no NBKeyPrefix, so the registration's overlap check
// does not see it), was accepted silently. The existing value kept its
// CONFIGURED status; deleting it afterwards ran no Delete, reported it
// gone (NONEXISTENT) and left it in the southbound. Such a registration
// is now refused, naming the keys.

func TestAdvLateOverlappingDescriptorDoesNotOrphanValues(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, sb.Descriptor("a", "x/"))
	mustSet(t, s, "x/1", "v")
	wantOps(t, sb, "create x/1")

	other := sb.Descriptor("c", "")
	other.KeySelector = func(k string) bool { return strings.HasPrefix(k, "x/") }
	regErr := s.RegisterDescriptor(context.Background(), other)
	st := s.GetValueStatus("x/1")
	if regErr == nil && !errors.Is(st.Error, kvscheduler.ErrAmbiguousKey) {
		t.Logf("registration accepted and x/1 not reported ambiguous: %s", advState(s, "x/1"))
	}

	err := set(t, s, "x/1", nil)
	_, still := sb.Values()["x/1"]
	if still && err == nil {
		t.Errorf("the delete of x/1 succeeded with %s, ops %v, yet the southbound still holds x/1",
			advState(s, "x/1"), sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after deleting x/1", "x/")
}

// A derived value without a descriptor is a property: it exists while its
// base does, with no operations of its own. A descriptor registered later
// that claimed a property's key took it over as if it had been created:
// it was reported CONFIGURED (and in the SB view) although nothing created
// it; its base's next update failed on it, and the base's delete was then
// refused ("not deleted: p/1 ... still exists"): the base stayed in the
// southbound. Such a registration is now refused, naming the keys.

func TestAdvDescriptorClaimingAPropertyDoesNotStrandItsBase(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	x := sb.Descriptor("x", "x/")
	x.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "p/" + strings.TrimPrefix(key, "x/"), Value: v}}
	}
	register(t, s, x)
	mustSet(t, s, "x/1", "a") // p/1 is a property: no descriptor
	wantOps(t, sb, "create x/1")

	p := sb.Descriptor("p", "p/")
	p.NBKeyPrefix = ""
	// Refusing the registration, naming the property's key, is fine: p/1
	// then stays x/1's property, in the SB view with its base although the
	// southbound (which holds values of descriptors only) does not list it.
	if err := s.RegisterDescriptor(context.Background(), p); err != nil {
		if !errors.Is(err, kvscheduler.ErrInvalidDescriptor) || !strings.Contains(err.Error(), "p/1") {
			t.Fatalf("registration refused with %v, want an ErrInvalidDescriptor naming p/1", err)
		}
		advWantAgree(t, s, sb, "after the refused registration of p", "x/")
	} else {
		advWantAgree(t, s, sb, "after registering p", "x/", "p/")
	}
	err := set(t, s, "x/1", nil)
	if _, ok := sb.Values()["x/1"]; ok {
		t.Errorf("the delete of x/1 (error %v, ops %v) left x/1 in the southbound: %s; p/1: %s",
			err, sb.OpStrings(), advState(s, "x/1"), advState(s, "p/1"))
	}
	advWantAgree(t, s, sb, "after deleting x/1", "x/", "p/")
}
