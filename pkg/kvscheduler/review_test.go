package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// boxed is a comparable type whose values may hold uncomparable ones:
// comparing two of them with == panics.
type boxed struct{ V any }

// A value of a comparable type holding an uncomparable one, applied twice,
// must not crash the scheduler (the check of "the same value as before"
// compared it with ==).
func TestUncomparableDynamicValueApplied(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	d := sb.Descriptor("d", "d/")
	d.Dependencies = func(string, any) []kvscheduler.Dependency { return nil }
	d.DerivedValues = func(string, any) []kvscheduler.KeyValuePair { return nil }
	register(t, s, d)
	mustSet(t, s, "d/a", boxed{V: []int{1}})
	mustSet(t, s, "d/a", boxed{V: []int{1}})
	mustSet(t, s, "d/a", boxed{V: []int{2}})
	wantState(t, s, "d/a", kvscheduler.Configured)
}
