package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A delete that waits for a dependent to go (its own delete failed) is
// released by the resync whose read finds the value replaced by the
// southbound's own (Origin FromSB: a value someone else made under the
// key). The release runs as the southbound's value's (no Delete called),
// and acts as if the value had gone: its dependent, still wanted, is
// deleted into PENDING although what it depends on exists, and the value
// the southbound holds is reported NONEXISTENT.
//
// a/2 = w|a/3 Requires a/3 = v; a/3 is withdrawn, a/2's delete (taking
// it down first) fails, so a/3's delete waits for a/2. The southbound
// replaces a/3 with x, its own. A resync (downstream, or full with a/2
// requested) deletes a/2 and reports a/3 NONEXISTENT; the southbound
// holds a/3 = x. Found by a fuzz comparing the SB view with the
// southbound after clean resyncs. Fixed: a read that finds the value of a
// requested delete replaced by the southbound's own drops the delete as
// done (refresh.go refreshValue, dropDeleteRequest).

func TestAdv5ReleasedDeleteOfAValueTheSouthboundReplacedKeepsIt(t *testing.T) {
	for _, rs := range []kvscheduler.ResyncType{kvscheduler.DownstreamResync, kvscheduler.FullResync} {
		t.Run(rs.String(), func(t *testing.T) {
			s := newSched(t, kvscheduler.Options{})
			sb := kvtest.New()
			register(t, s, withDeps(sb.Descriptor("a", "a/")))
			mustSet(t, s, "a/3", "v", "a/2", "w|a/3")
			sb.FailNext("delete", "a/2", errors.New("boom"))
			if err := set(t, s, "a/3", nil); err == nil {
				t.Fatal("the delete of a/2 failed, Commit returned nil")
			}
			wantState(t, s, "a/3", kvscheduler.Failed) // waits for a/2
			sb.Set("a/3", "x", true)
			sb.ResetOps()
			txn := s.StartNBTransaction().WithResync(rs)
			if rs == kvscheduler.FullResync {
				txn.SetValue("a/2", "w|a/3")
			}
			_, err := txn.Commit(context.Background())
			advWantAgree(t, s, sb, "after the resync", "a/")
			if _, ok := sb.Values()["a/2"]; !ok {
				t.Errorf("a/2 is wanted and what it Requires (a/3) is in the southbound, yet the resync deleted it: Commit %v, ops %v; a/2 %s; a/3 %s",
					err, sb.OpStrings(), advState(s, "a/2"), advState(s, "a/3"))
			}
		})
	}
}
