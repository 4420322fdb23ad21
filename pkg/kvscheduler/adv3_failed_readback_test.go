package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Rule 5: "a failed operation leaves the value as the southbound holds it
// (read back right after the transaction)"; rule 7: what a failed read
// could not see is neither present nor absent, no operation is decided on
// it. refreshFailed drops the error of the read-back after failures: a
// create that did its work and then failed (a timeout after the
// southbound acted) is believed absent, Commit's error does not name the
// read (Retrieve empty, OnlyFailedValues true: "a committer may tolerate
// such failures"), and withdrawing the request commits nil without a
// delete: the value stays in the southbound for good, reported
// NONEXISTENT.

func TestAdv3FailedReadBackIsNotAbsence(t *testing.T) {
	advOpen(t, "a failed read-back after a failed create is dropped: the value it left is believed absent, and its withdrawal leaves it in the southbound with Commit nil")
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	create := a.Create
	halfDone := true
	a.Create = func(ctx context.Context, k string, v any) (any, error) {
		md, err := create(ctx, k, v)
		if halfDone && err == nil {
			halfDone = false
			return md, errors.New("timeout (after the southbound created it)")
		}
		return md, err
	}
	register(t, s, a)
	sb.FailNext("retrieve", "a", errors.New("read fails"))
	_, err := s.StartNBTransaction().SetValue("a/1", "x").Commit(ctx)
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) {
		t.Fatalf("error %v, want a *TransactionError", err)
	}
	readNamed := len(te.Retrieve) > 0 || !te.OnlyFailedValues()
	_, err = s.StartNBTransaction().SetValue("a/1", nil).Commit(ctx)
	if d := advSBMismatch(s, sb, "a/"); len(d) > 0 {
		t.Fatalf("the first Commit's error %q named the failed read-back: %v (OnlyFailedValues %v); "+
			"withdrawing a/1 then returned %v and left: %v", te, readNamed, te.OnlyFailedValues(), err, d)
	}
}
