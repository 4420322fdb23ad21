package kvscheduler_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// WithRevert "re-applies the previous requests in reverse order" and
// TransactionError.Reverted is "true when the transaction was reverted
// completely". Before the transaction b/1 is CONFIGURED with d/1 and b/2,
// which derives d/1 too, is INVALID. The transaction deletes b/1 and
// changes b/2, and fails. The undo gives b/2 back its old request first:
// with b/1 gone it is valid, and created with d/1; then b/1's request,
// now the one that clashes, is INVALID and stays deleted. Commit says the
// transaction was reverted, yet the southbound holds b/2's value where
// b/1's was, and b/1 is deleted.

func TestAdv3RevertOverAnInvalidValueRestoresTheState(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d, sb.Descriptor("x", "x/"))
	mustSet(t, s, "b/1", "v@1")
	wantInvalid(t, set(t, s, "b/2", "w@1"), "b/2")
	before := sb.Values()
	sb.FailNext("create", "x/1", errors.New("boom"))
	_, err := s.StartNBTransaction().WithRevert().
		SetValue("b/1", nil).SetValue("b/2", "w@2").SetValue("x/1", "v").Commit(ctx)
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) {
		t.Fatalf("error %v, want a *TransactionError", err)
	}
	if after := sb.Values(); te.Reverted && !reflect.DeepEqual(after, before) {
		t.Fatalf("Commit reports the transaction reverted (%v), but the southbound held %v before and holds %v after (b/1 %s; b/2 %s)",
			err, before, after, advState(s, "b/1"), advState(s, "b/2"))
	}
}
