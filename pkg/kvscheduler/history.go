package kvscheduler

import (
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
}

func (h *history) add(r *TxnRecord, now time.Time) {
	if h.maxCount < 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
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
