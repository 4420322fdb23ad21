package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
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

// The same with a delete that did its work and then failed: the read-back
// fails and is dropped, so a/1 is believed held (FAILED). Requested again
// with the value it had, a/1 is taken as in sync: Commit returns nil,
// a/1 is CONFIGURED while the southbound does not hold it, and c/1, which
// Requires a/1, is created without it.
func TestAdv3FailedReadBackAfterHalfDoneDelete(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	del := a.Delete
	halfDone := false
	a.Delete = func(ctx context.Context, k string, v, md any) error {
		err := del(ctx, k, v, md)
		if halfDone && err == nil {
			halfDone = false
			return errors.New("timeout (after the southbound deleted it)")
		}
		return err
	}
	register(t, s, a, withDeps(sb.Descriptor("c", "c/")))
	mustSet(t, s, "a/1", "x", "c/1", "x|a/1")
	halfDone = true
	sb.FailNext("retrieve", "a", errors.New("read fails"))
	if _, err := s.StartNBTransaction().SetValue("a/1", nil).Commit(ctx); err == nil {
		t.Fatal("the delete failed, Commit returned nil")
	}
	_, err := s.StartNBTransaction().SetValue("a/1", "x").Commit(ctx)
	if d := advSBMismatch(s, sb, "a/", "c/"); len(d) > 0 {
		t.Fatalf("a/1 requested again: Commit %v, ops %v, and:\n  %s", err, sb.OpStrings(), strings.Join(d, "\n  "))
	}
}
