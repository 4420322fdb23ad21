package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// A record names what its transaction applied: TxnRecord.Values are "the
// requested changes ... a retry's are the requests it applies again"
// (record.go). The resume of a stopped transaction's half-done value
// applies that value's request again, as a retry does, but its record
// does not name it. r/1 = v| is held; a transaction requests r/1 = w|
// (re-created) and its context ends once r/1's delete ran; the next
// transaction requests nothing, and its record carries "CREATE r/1" with
// Values empty: nothing in the history says which request it applied, or
// why a transaction that requested nothing created r/1 (h25u's report
// names this as left open).
func TestAdv9ResumeRecordDoesNotNameTheRequestItApplies(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("r/1", "v|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.fc.arm("r/1", cancel) // the caller gives up once r/1's delete ran
	_, stopped := x.nb("r/1", "w|").Commit(cctx)
	x.fc.disarm()
	rec, err := x.s.StartNBTransaction().Commit(ctx) // requests nothing; waits for the stopped one
	if err != nil {
		t.Fatal(err)
	}
	created := false
	for _, op := range rec.Executed {
		created = created || (op.Key == "r/1" && op.Operation == kvscheduler.OpCreate)
	}
	named := false
	for _, kv := range rec.Values {
		named = named || kv.Key == "r/1"
	}
	if created && !named {
		t.Fatalf("transaction #%d created r/1 (resuming the stopped re-create) but its Values %v do not name r/1 (executed %v; stopped commit: %v)",
			rec.SeqNum, rec.Values, rec.Executed, stopped)
	}
	if !created {
		t.Fatalf("transaction #%d did not resume r/1's re-create (executed %v; stopped commit: %v)", rec.SeqNum, rec.Executed, stopped)
	}
}
