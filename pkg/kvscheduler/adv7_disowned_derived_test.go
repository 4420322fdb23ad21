package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv7BaseNeverGetsBackADerivedValueTheSouthboundTookAndDropped: b/1
// is CONFIGURED, deriving d/1 and d/2. The southbound puts its own value
// under d/2 (origin FromSB), and the scheduler finds it so: either a
// scoped repair of d/2 reads it, or b/1's update to a value that derives
// d/2 fails to create it and the read-back after the failure reports it.
// d/2 is the southbound's now (OBTAINED, disown), and b/1 stays
// CONFIGURED, no error (no clash is judged until b/1 is applied again).
// Then the southbound drops its d/2, and the scheduler learns it (a
// notification, or another scoped repair of d/2). d/2 is free: b/1, still
// wanted with a value that derives d/2, and reported CONFIGURED, should
// have it again (a full downstream resync does create it; rule 8 applies
// a base INVALID for the southbound's key as soon as the key is free).
// Instead nothing creates d/2: b/1 stays CONFIGURED without it,
// transaction after transaction.
func TestAdv7BaseNeverGetsBackADerivedValueTheSouthboundTookAndDropped(t *testing.T) {
	ctx := context.Background()
	for _, found := range []string{"scoped read", "failed create"} {
		for _, gone := range []string{"notification", "scoped repair"} {
			x := newAdv6Script(t)
			first := "w@1@2|"
			if found == "failed create" {
				first = "w@1|"
			}
			if _, err := x.nb("b/1", first).Commit(ctx); err != nil {
				t.Fatal(err)
			}
			x.sb.Set("d/2", "x|", true)
			if found == "failed create" {
				if _, err := x.nb("b/1", "w@1@2|").Commit(ctx); err == nil {
					t.Fatalf("%s: the create of d/2, which the southbound holds, did not fail", found)
				}
			} else if _, err := x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("d/2").Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if st := x.s.GetValueStatus("d/2"); st.State != kvscheduler.Obtained {
				t.Fatalf("%s: the southbound's own d/2 is %s, not OBTAINED", found, st.State)
			}
			x.sb.Remove("d/2")
			if gone == "notification" {
				if err := x.s.PushSBNotification("d/2", nil, nil); err != nil {
					t.Fatal(err)
				}
			} else {
				_, _ = x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("d/2").Commit(ctx)
			}
			for i := 0; i < 2; i++ {
				if _, err := x.nb("a/1", []string{"v|", "w|"}[i]).Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			st := x.s.GetValueStatus("b/1")
			if v := x.sb.Values()["d/2"]; st.State == kvscheduler.Configured && v != "dv-w@1@2" {
				t.Errorf("%s, gone by %s: b/1 reported CONFIGURED (value w@1@2|, deriving d/1 and d/2), but the southbound holds d/2 = %v once its own d/2 went (d/2 %s; southbound %v)",
					found, gone, v, x.s.GetValueStatus("d/2").State, x.sb.Values())
			}
		}
	}
}
