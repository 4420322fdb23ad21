package kvscheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// history keeps the records of processed transactions, bounded by count
// and by age.
type history struct {
	mu       sync.Mutex
	recs     []*TxnRecord
	maxCount int
	maxAge   time.Duration
	// The statuses recorded with the last record are the published
	// entries' (pubEntry.rec): a transaction's statuses are published and
	// its record added under mu, so that past graphs are rebuilt from a
	// state consistent with recs.
}

// addLocked adds r, under mu.
func (h *history) addLocked(r *TxnRecord, now time.Time) {
	if h.maxCount < 0 {
		return
	}
	h.recs = append(h.recs, r)
	if over := len(h.recs) - h.maxCount; over > 0 {
		clear(h.recs[:over])
		h.recs = h.recs[over:]
	}
	h.trimLocked(now)
}

func (h *history) trimLocked(now time.Time) {
	cut := 0
	for cut < len(h.recs) && now.Sub(h.recs[cut].Stop) > h.maxAge {
		cut++
	}
	if cut > 0 {
		clear(h.recs[:cut])
		h.recs = h.recs[cut:]
	}
}

// scheduleTrim trims by age periodically, so that memory is released even
// when no transaction runs.
func (s *Scheduler) scheduleTrim() {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed {
		return
	}
	// Fake clocks run the callback under their own lock, so the callback
	// must not call the clock synchronously.
	s.trimTimer = s.opts.Clock.AfterFunc(s.opts.HistoryTrimPeriod, func() {
		go func() {
			s.hist.mu.Lock()
			s.hist.trimLocked(s.opts.Clock.Now())
			s.hist.mu.Unlock()
			s.scheduleTrim()
		}()
	})
}

// TransactionHistory returns the recorded transactions that finished
// within [since, until]; zero times are open bounds.
func (s *Scheduler) TransactionHistory(since, until time.Time) []*TxnRecord {
	s.hist.mu.Lock()
	defer s.hist.mu.Unlock()
	var out []*TxnRecord
	for _, r := range s.hist.recs {
		if (since.IsZero() || !r.Stop.Before(since)) && (until.IsZero() || !r.Stop.After(until)) {
			out = append(out, r)
		}
	}
	return out
}

// GetRecordedTransaction returns the record with the given sequence number,
// if it is still kept.
func (s *Scheduler) GetRecordedTransaction(seq uint64) (*TxnRecord, bool) {
	s.hist.mu.Lock()
	defer s.hist.mu.Unlock()
	for _, r := range s.hist.recs {
		if r.SeqNum == seq {
			return r, true
		}
	}
	return nil, false
}

// ErrOutsideHistory is returned (wrapped) by GraphSnapshot and
// GraphSnapshotAt for a point that the retained history does not cover:
// before the oldest retained record (or the first transaction), a sequence
// number no longer kept, or any point when history is disabled.
var ErrOutsideHistory = errors.New("outside retained transaction history")

// GraphSnapshot is the value graph as it was right after one recorded
// transaction.
type GraphSnapshot struct {
	// SeqNum is the sequence number of the transaction.
	SeqNum uint64
	// Time is when the transaction finished (its record's Stop).
	Time time.Time
	// Values are the statuses of all values known after the transaction,
	// sorted by key, with their dependencies (and whether each was met),
	// descriptor and base key, exactly as published then.
	Values []ValueStatus
}

// GraphSnapshot returns the value graph after the last recorded transaction
// that finished at or before t.
//
// The snapshot is complete: it covers every value, including values
// unchanged within the retained history. It is rebuilt by starting from the
// statuses published with the newest record and undoing, newest first, the
// status changes kept with each later record; records are trimmed only
// from the oldest, so the retained ones are contiguous. What it cannot
// answer is a time before the oldest retained record (including a time
// before the first transaction): that returns an error wrapping
// ErrOutsideHistory, as does any point when history is disabled.
// Intermediate statuses published during a transaction (MISSING values
// found by a refresh) are not part of any snapshot.
//
// For this, each record keeps the statuses its transaction changed, before
// and after it (references to the published statuses). Like the statuses
// returned by ValueStatuses, the snapshot's slices are shared and must not
// be modified.
func (s *Scheduler) GraphSnapshot(t time.Time) (GraphSnapshot, error) {
	return s.snapshot(func(recs []*TxnRecord) (int, error) {
		// Searched from the newest: the wall clock may have been set back,
		// so Stop times are not necessarily sorted, and the newest record
		// finished by t is the one whose results were visible at t.
		for i := len(recs) - 1; i >= 0; i-- {
			if !recs[i].Stop.After(t) {
				return i, nil
			}
		}
		if len(recs) == 0 {
			return 0, fmt.Errorf("no transaction recorded: %w", ErrOutsideHistory)
		}
		return 0, fmt.Errorf("time %s is before the oldest retained transaction #%d (%s): %w",
			t.Format(time.RFC3339Nano), recs[0].SeqNum, recs[0].Stop.Format(time.RFC3339Nano), ErrOutsideHistory)
	})
}

// GraphSnapshotAt returns the value graph right after the recorded
// transaction seq; see GraphSnapshot for what the snapshot covers.
func (s *Scheduler) GraphSnapshotAt(seq uint64) (GraphSnapshot, error) {
	return s.snapshot(func(recs []*TxnRecord) (int, error) {
		for i, r := range recs {
			if r.SeqNum == seq {
				return i, nil
			}
		}
		return 0, fmt.Errorf("transaction #%d is not retained: %w", seq, ErrOutsideHistory)
	})
}

// snapshot rebuilds the statuses after the record chosen by pick.
func (s *Scheduler) snapshot(pick func([]*TxnRecord) (int, error)) (GraphSnapshot, error) {
	if s.hist.maxCount < 0 {
		return GraphSnapshot{}, fmt.Errorf("transaction history is disabled: %w", ErrOutsideHistory)
	}
	s.hist.mu.Lock()
	recs := s.hist.recs
	i, err := pick(recs)
	if err != nil {
		s.hist.mu.Unlock()
		return GraphSnapshot{}, err
	}
	// Only the keys changed by later records differ from the statuses
	// recorded last; the others are read from those directly. They change
	// with every record, so they are read under the lock.
	target := recs[i]
	past := make(map[string]*ValueStatus)
	for j := len(recs) - 1; j > i; j-- {
		for _, c := range recs[j].changes {
			past[c.key] = c.before
		}
	}
	s.smu.RLock()
	vals := make([]ValueStatus, 0, len(s.statuses)+len(past))
	for k, e := range s.statuses {
		if _, undone := past[k]; !undone && e.rec != nil {
			vals = append(vals, *e.rec)
		}
	}
	s.smu.RUnlock()
	s.hist.mu.Unlock()
	for _, st := range past {
		if st != nil {
			vals = append(vals, *st)
		}
	}
	slices.SortFunc(vals, func(a, b ValueStatus) int { return strings.Compare(a.Key, b.Key) })
	return GraphSnapshot{SeqNum: target.SeqNum, Time: target.Stop, Values: vals}, nil
}
