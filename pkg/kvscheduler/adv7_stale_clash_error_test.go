package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv7ClashErrorNamesAHolderThatNoLongerHoldsTheKey: b/1 derives d/2,
// so b/2, requested with a value that derives d/2 too, is INVALID: "b/2
// derives d/2, which b/1 derives". The southbound then puts its own value
// under d/2 (origin FromSB) and a scoped repair of d/2 reads it: d/2 is
// the southbound's (OBTAINED, no base), and b/1 no longer lists it. b/2
// is still INVALID, rightly (rule 8: the southbound holds the key as its
// own), but its status goes on saying that b/1 derives d/2, which is no
// longer so: the error the user reads names the wrong holder, and
// removing or changing b/1, as it suggests, frees nothing.
func TestAdv7ClashErrorNamesAHolderThatNoLongerHoldsTheKey(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "w@2|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.nb("b/2", "v@2|").Commit(ctx); err == nil {
		t.Fatal("b/2, which derives b/1's d/2, was applied")
	}
	x.sb.Set("d/2", "x|", true)
	if _, err := x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("d/2").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	d2 := x.s.GetValueStatus("d/2")
	if d2.State != kvscheduler.Obtained || d2.BaseKey != "" {
		t.Fatalf("the southbound's own d/2 is %s with base %q, not OBTAINED", d2.State, d2.BaseKey)
	}
	st := x.s.GetValueStatus("b/2")
	if st.State != kvscheduler.Invalid {
		t.Fatalf("b/2 is %s, not INVALID, while the southbound holds d/2 as its own", st.State)
	}
	if st.Error != nil && strings.Contains(st.Error.Error(), "which b/1 derives") {
		t.Errorf("b/2's error says %q, but d/2 is the southbound's own (OBTAINED, base %q), not b/1's", st.Error, d2.BaseKey)
	}
}
