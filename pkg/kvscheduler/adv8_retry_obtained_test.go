package kvscheduler_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// d/1's create fails under b/1 (its retry armed); the southbound then
// holds b/2 as its own, which derives d/1 too, and a full resync reads
// it. The retry of d/1's create that follows must record only what the
// southbound saw. Before, the read moved d/1 to b/2 but kept its failed
// create, and the retry applied it as the southbound's: an implicit
// create, recorded ("CREATE [DERIVED RETRY] d/1, RETRYING -> OBTAINED")
// but never run. Reduced from adv5 fuzz seed 40632 of -fzretry -fzdd
// -fzcancel -fzcancelall -fzview (the stop of its full resync is not
// needed).
func TestAdv8RetryOfACreateTheSouthboundTookRecordsNoCreate(t *testing.T) {
	x := newAdv6Script(t)
	x.sb.FailNext("create", "d/1", errors.New("injected"))
	x.commit(x.nb("b/1", "v@1|"), 0, true)
	x.sb.Set("b/2", "w@1@2|", true)
	x.commit(x.nb("b/1", "v@1|").WithResync(kvscheduler.FullResync), 0, false)
	x.commit(x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("r/2"), 3*time.Second, false)
	// The southbound's b/2 holds d/1 (OBTAINED), and b/1, deriving it
	// too, is INVALID for the clash (rule 8), not CONFIGURED.
	if st := x.s.GetValueStatus("d/1"); st.State != kvscheduler.Obtained || st.BaseKey != "b/2" {
		t.Errorf("d/1 is %v of %q, want OBTAINED of b/2", st.State, st.BaseKey)
	}
	if st := x.s.GetValueStatus("b/1"); st.State != kvscheduler.Invalid {
		t.Errorf("b/1 is %v, want INVALID (it derives d/1, the southbound's b/2's)", st.State)
	}
	if msg := fzCheckDerivedHeld(x.s); msg != "" {
		t.Errorf("%s", msg)
	}
}
