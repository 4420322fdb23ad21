package schedulerhttp

import (
	"errors"
	"net/http"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

func (h *handler) downstreamResync(w http.ResponseWriter, r *http.Request) error {
	retry, err := boolParam(r, "retry")
	if err != nil {
		return err
	}
	txn := h.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).
		WithDescription("downstream resync requested over REST")
	if retry {
		txn = txn.WithRetry(h.resyncRetry)
	}
	rec, err := txn.Commit(r.Context())
	if rec == nil {
		if err == nil {
			err = errors.New("the scheduler returned no transaction record")
		}
		writeError(w, http.StatusServiceUnavailable, err)
		return nil
	}
	// Failed operations are in the record; the resync itself happened.
	out := ResyncResult{TxnJSON: encodeTxn(rec)}
	if retry {
		out.NotRetrying = notRetrying(h.s, rec)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ResyncResult is the answer of POST /scheduler/downstream-resync: the
// record of the resync.
//
// NotRetrying lists, when retry=true was asked, the keys whose operations
// failed in the resync and are not RETRYING now. The scheduler applies the
// retry options of the transaction that last set each value, not those of
// the resync, so retry=true cannot make it retry them; the list tells the
// caller instead of leaving it to believe they will be retried.
type ResyncResult struct {
	TxnJSON
	NotRetrying []string `json:"notRetrying,omitempty"`
}

func notRetrying(s *kvscheduler.Scheduler, rec *kvscheduler.TxnRecord) []string {
	var out []string
	seen := map[string]bool{}
	for _, op := range rec.Executed {
		if op.Err == nil || seen[op.Key] {
			continue
		}
		seen[op.Key] = true
		if s.GetValueStatus(op.Key).State != kvscheduler.Retrying {
			out = append(out, op.Key)
		}
	}
	return out
}
