package kvscheduler

import (
	"sort"
	"time"

	"k8s.io/utils/clock"
)

// scheduleRetries arms a timer for every value that failed in rec and may
// still be retried; the others become FAILED until their value changes.
func (s *Scheduler) scheduleRetries(rec *TxnRecord) {
	groups := map[time.Duration][]string{}
	for k, f := range s.failed {
		if f.seq != rec.SeqNum || !f.blocked || f.retrying || f.exhausted {
			continue
		}
		o := f.retryOpts
		if !o.Enabled || !retriable(f.d, f.err) || (o.MaxAttempts > 0 && f.attempts > o.MaxAttempts) {
			f.exhausted = true
			continue
		}
		f.retrying = true
		d := o.delay(f.attempts)
		groups[d] = append(groups[d], k)
	}
	for d, keys := range groups {
		sort.Strings(keys)
		s.retryGen++
		gen := s.retryGen
		for _, k := range keys {
			s.failed[k].gen = gen
		}
		s.armRetry(d, &job{kind: jobRetry, keys: keys, gen: gen})
	}
}

func (s *Scheduler) armRetry(d time.Duration, j *job) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed {
		return
	}
	var t clock.Timer
	// The callback may run under a fake clock's lock while armRetry holds
	// qmu: it must not take qmu synchronously.
	t = s.opts.Clock.AfterFunc(d, func() {
		go func() {
			s.qmu.Lock()
			delete(s.timers, t)
			s.qmu.Unlock()
			_ = s.enqueue(j) // fails only when closed: nothing to retry then
		}()
	})
	s.timers[t] = struct{}{}
}
