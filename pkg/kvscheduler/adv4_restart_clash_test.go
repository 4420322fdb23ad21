package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// After a restart the southbound holds b/0 = w@1, b/1 = v@1 and d/1 =
// v@1, and the first full resync requests both bases. Both derive d/1, so
// one is INVALID (rule 8): b/0 is. d/1 is exactly what the valid base b/1
// derives, so nothing wanted may be deleted: the resync should delete
// b/0 and leave d/1. Instead the read lists d/1 under both bases, the
// INVALID b/0 takes d/1 down with it ("delete d/1, delete b/0") and b/1
// creates it again: a value still wanted, held as wanted, is deleted and
// re-created (for a Kubernetes object: deleted, with what it carries).

func TestAdv4ResyncKeepsTheDerivedValueOfTheValidBaseOfAClash(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	sb.Set("b/0", "w@1", false)
	sb.Set("b/1", "v@1", false)
	sb.Set("d/1", "v@1", false)
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).
		SetValue("b/0", "w@1").SetValue("b/1", "v@1").Commit(context.Background())
	wantInvalid(t, err, "b/0")
	for _, op := range sb.OpStrings() {
		if op == "delete d/1" {
			t.Fatalf("the resync deleted d/1, which the valid base b/1 derives as held (v@1): ops %v, southbound %v, d/1 %s",
				sb.OpStrings(), sb.Values(), advState(s, "d/1"))
		}
	}
}
