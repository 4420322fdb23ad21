package schedulerhttp

import (
	"errors"
	"net/http"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

func (h *handler) downstreamResync(w http.ResponseWriter, r *http.Request) error {
	// The scheduler retries a failed value with the retry options of the
	// transaction that set it, whatever the transaction that failed it:
	// options given to the resync would have no effect, so the parameter
	// that asked for them is refused rather than silently ignored.
	if r.URL.Query().Has("retry") {
		return badParam{errors.New("parameter retry is not supported: the scheduler retries a failed value " +
			"with the retry options of the transaction that set it (Txn.WithRetry), not with the resync's; " +
			"notRetrying in the answer lists the failed values it will not retry")}
	}
	rec, err := h.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).
		WithDescription("downstream resync requested over REST").Commit(r.Context())
	if rec == nil {
		if err == nil {
			err = errors.New("the scheduler returned no transaction record")
		}
		writeError(w, http.StatusServiceUnavailable, err)
		return nil
	}
	// Failed operations are in the record; the resync itself happened.
	writeJSON(w, http.StatusOK, ResyncResult{TxnJSON: encodeTxn(rec), NotRetrying: notRetrying(h.s, rec)})
	return nil
}

// ResyncResult is the answer of POST /scheduler/downstream-resync: the
// record of the resync.
//
// NotRetrying lists the keys whose operations failed in the resync and are
// not RETRYING now. The scheduler retries a value with the retry options
// of the transaction that last set it, so the values set without them stay
// failed until the next change or resync; the list tells the caller which
// failures will not repair themselves.
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
