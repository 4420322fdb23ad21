package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestBaseMadeReadyByAnotherBasesCreateDoesNotDeriveItsKeys: b/2=w@2|~b/1
// waits (PENDING) for b/1, which it is ordered after. b/1 is then
// requested with w@1@2|, which derives d/1 and d/2: b/1's create makes
// b/2 ready, and b/2 is walked before b/1's derived values are applied.
// d/2 is b/1's from the moment b/1 lists it, so b/2 is INVALID for the
// clash (rule 8), and the southbound holds b/1's d/2. Before, d/2 looked
// free to b/2 (no node yet), b/2 was created with it, and b/1's frame
// then took it from b/2 silently: both bases listed d/2, and b/2's later
// delete deleted b/1's value (adv5 fuzz seed 38 of -fzdheld -fznoownedr
// -fzretry -fzdd).
func TestBaseMadeReadyByAnotherBasesCreateDoesNotDeriveItsKeys(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/2", "w@2|~b/1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if st := x.s.GetValueStatus("b/2"); st.State != kvscheduler.Pending {
		t.Fatalf("b/2, ordered after the absent b/1, is %s, not PENDING", st.State)
	}
	_, err := x.nb("b/1", "w@1@2|").Commit(ctx)
	checkBasesHoldTheirKeys(t, x, err)
	if st := x.s.GetValueStatus("b/1"); st.State != kvscheduler.Configured {
		t.Errorf("b/1 is %s (%v), not CONFIGURED", st.State, st.Error)
	}
}

// TestBaseMadeReadyAgainDoesNotDeriveTheKeyTheBaseItRequiresClaimed:
// b/1=v@1|b/2 (d/1) Requires b/2=w@2| (d/2), both CONFIGURED. b/2 is then
// requested with v@1|, which derives d/1: INVALID for the clash, b/2's old
// value goes, b/1 with it (PENDING), and d/1 is free, so b/2 is applied
// with it. Its create makes b/1 ready again, walked before b/2's d/1 is
// applied: d/1 is b/2's from the moment b/2 lists it, and b/1 is INVALID
// for the clash. Before, d/1's node still named b/1 (its base before the
// delete), so b/1 found the key its own and listed it too: both bases
// CONFIGURED on d/1, and b/1's next change deleted b/2's d/1 (adv5 fuzz
// seed 1058 of -fzdheld).
func TestBaseMadeReadyAgainDoesNotDeriveTheKeyTheBaseItRequiresClaimed(t *testing.T) {
	x := newAdv6Script(t)
	props := *fzProps
	*fzProps = false
	t.Cleanup(func() { *fzProps = props })
	ctx := context.Background()
	if _, err := x.nb("b/1", "v@1|b/2").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.nb("b/2", "w@2|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if st := x.s.GetValueStatus("b/1"); st.State != kvscheduler.Configured {
		t.Fatalf("b/1 is %s once b/2 is there, not CONFIGURED", st.State)
	}
	x.sb.ResetOps()
	_, err := x.nb("b/2", "v@1|").Commit(ctx)
	checkBasesHoldTheirKeys(t, x, err)
	x.sb.ResetOps()
	_, err = x.nb("b/1", "v@2|b/2").Commit(ctx)
	checkBasesHoldTheirKeys(t, x, err)
}

// checkBasesHoldTheirKeys checks rule 8 on b/1 and b/2: each CONFIGURED
// one is the base of every key its value in the southbound derives, and
// the southbound holds its derived value there.
func checkBasesHoldTheirKeys(t *testing.T, x *adv6Script, err error) {
	t.Helper()
	var held []string
	for _, k := range []string{"b/1", "b/2"} {
		if st := x.s.GetValueStatus(k); st.State == kvscheduler.Configured {
			held = append(held, k)
		}
	}
	for _, k := range held {
		v, _ := x.sb.Values()[k].(string)
		tag, _, _ := strings.Cut(v, "|")
		for _, part := range strings.Split(tag, "@")[1:] {
			d := x.s.GetValueStatus("d/" + part)
			if d.BaseKey != k || x.sb.Values()["d/"+part] != "dv-"+tag {
				t.Errorf("%s CONFIGURED (%s) but d/%s is %s with base %q, the southbound holding %v (CONFIGURED: %v; ops %v; commit error %v)",
					k, v, part, d.State, d.BaseKey, x.sb.Values()["d/"+part], held, x.sb.OpStrings(), err)
			}
		}
	}
}
