package kvscheduler

import (
	"sort"
	"time"

	"k8s.io/utils/clock"
)

// scheduleRetries arms a timer for every value that failed in the
// transaction and may still be retried, with the retry options of the
// request of its base; the others stay FAILED until their value changes
// or a resync.
func (s *Scheduler) scheduleRetries(w *walker) {
	groups := map[time.Duration][]string{}
	seen := map[*node]bool{}
	for _, n := range w.failedNs {
		if seen[n] || s.g.nodes[n.key] != n || !n.blocked || n.txnSeq != w.seq || !n.txnFail {
			continue
		}
		seen[n] = true
		var o RetryOptions
		if b := s.g.nodes[s.g.baseKey(n)]; b != nil && b.last != nil {
			o = b.last.retry
		}
		if !o.Enabled || !retriable(n.d, n.err) || (o.MaxAttempts > 0 && n.attempt > o.MaxAttempts) {
			continue
		}
		d := o.delay(n.attempt)
		groups[d] = append(groups[d], n.key)
	}
	for d, keys := range groups {
		sort.Strings(keys)
		s.retryGen++
		gen := s.retryGen
		for _, k := range keys {
			s.g.nodes[k].retryGen = gen
			s.dirty(k)
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
