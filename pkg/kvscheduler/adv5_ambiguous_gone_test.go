package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A value under a key two descriptors claim (ambiguous.go: "a"'s prefix x/
// and "a2"'s key x/1, both registered before any value) is held as read
// (OBTAINED) once a full resync reads it (TestAdv4ValueOfTwoDescriptorsReadIsNotTakenForAbsent).
// The other way round is not: once the southbound loses it, no read finds
// it gone (neither descriptor's read settles a key the node has no
// descriptor for). Two full resyncs that read everything without error
// leave x/1 OBTAINED in the SB view, and a value that Requires x/1 is
// created without it. Found by the adv5 fuzz (-fzamb). Fixed: a full or
// downstream resync in which every claiming descriptor read without error
// and none reported the key finds it gone (refresh.go ambiguousUnreported).

func TestAdv5AmbiguousValueLostIsFoundGone(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "x/")
	a2 := sb.Descriptor("a2", "x/1")
	a2.NBKeyPrefix = ""
	register(t, s, a, a2, withDeps(sb.Descriptor("y", "y/")))
	sb.Set("x/1", "pre", false)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, "x/1", kvscheduler.Obtained)
	sb.Remove("x/1")
	for i := 0; i < 2; i++ {
		if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	advWantAgree(t, s, sb, "after two full resyncs read the southbound without x/1", "x/")
	err := set(t, s, "y/1", "v|x/1")
	if _, ok := sb.Values()["y/1"]; ok {
		t.Errorf("y/1 Requires x/1, which the southbound does not hold, yet it was created: Commit %v, ops %v; x/1 %s; y/1 %s",
			err, sb.OpStrings(), advState(s, "x/1"), advState(s, "y/1"))
	}
}
