package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv14RecordKeepsTheValuesItWasCommittedWith checks that a
// transaction's record is its own: a Txn requested again after its Commit
// (SetValue on the same key) does not change the record the caller keeps,
// nor does a caller that edits the record change what the Txn requests.
func TestAdv14RecordKeepsTheValuesItWasCommittedWith(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	txn := s.StartNBTransaction().SetValue("a/1", "v")
	rec, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	txn.SetValue("a/1", "w")
	if got := rec.Values[0].Value; got != "v" {
		t.Errorf("the record of the Commit of a/1 = v says a/1 = %v once the Txn set a/1 again", got)
	}
	rec.Values[0].Value = "x"
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sb.Values()["a/1"]; got != "w" {
		t.Errorf("a/1 = %v in the southbound after the Txn's second Commit of a/1 = w (the first record edited)", got)
	}
}
