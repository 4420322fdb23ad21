package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A downstream resync "re-applies the last desired values after reading
// back". When its read reports a requested key as the southbound's own
// (Origin FromSB: a value someone else made under the key), the request
// is set aside, and lost: it is never applied again, even once that
// value is gone and what it waited for exists, and nothing reports it.
// (A full resync requesting the same state takes the key over and applies
// the request.)
//
// b/1 = w|a/1 is requested and waits for a/1 (PENDING). The southbound
// gets a b/1 of its own; a downstream resync reads it. a/1 is created:
// b/1 stays PENDING, with no unmet dependency. The southbound's b/1 goes;
// a downstream resync reads that: b/1 is NONEXISTENT, its request gone,
// no error. Found by a fuzz comparing records with the southbound.

func TestAdv5RequestOfAKeyReadAsTheSouthboundsIsNotLost(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "b/1", "w|a/1")
	wantState(t, s, "b/1", kvscheduler.Pending)
	sb.Set("b/1", "v", true)
	downstream := func() error {
		_, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
		return err
	}
	if err := downstream(); err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "a/1", "x")
	afterA := s.GetValueStatus("b/1")
	sb.Remove("b/1")
	if err := downstream(); err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "a/2", "y") // any later transaction
	if got := sb.Values()["b/1"]; got != "w|a/1" {
		t.Fatalf("b/1 = w|a/1 is requested, a/1 exists and the southbound's own b/1 is gone, yet the southbound holds b/1 = %v "+
			"(ops %v), b/1 %s; after a/1 came, b/1 was %s with unmet dependencies %v",
			got, sb.OpStrings(), advState(s, "b/1"), afterA.State, afterA.UnmetDependencies)
	}
}
