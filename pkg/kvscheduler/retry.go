package kvscheduler

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// scheduleRetries arms a timer for every value that failed in the
// transaction and may still be retried, with the retry options of the
// request of its base; the others stay FAILED until their value changes
// or a resync. Values that failed in a transaction with revert (not in its
// undo) are not retried, as in the reference.
func (s *Scheduler) scheduleRetries(w *walker) {
	groups := map[time.Duration][]string{}
	seen := map[*node]bool{}
	for _, n := range w.failedNs {
		if seen[n] || s.g.nodes[n.key] != n || !n.blocked() || !w.failedHere(n) {
			continue
		}
		seen[n] = true
		// A derived value left over by a failed delete may outlive its
		// base's node: it keeps the options it was last retried with.
		o := n.retryOpts()
		if b := s.g.nodes[s.g.baseKey(n)]; b != nil && b.last != nil {
			o = RetryOptions{}
			if b.last.retry != nil {
				o = *b.last.retry
			}
		}
		n.ext().retryOpts = o
		if !o.Enabled || w.noRetry[n] || !retriable(n.d, n.err) || (o.MaxAttempts > 0 && n.attempt() > o.MaxAttempts) {
			continue
		}
		d := o.delay(n.attempt())
		groups[d] = append(groups[d], n.key)
	}
	// In order of delay, so that retries due together run in the same
	// order every time (see dueRetries).
	for _, d := range slices.Sorted(maps.Keys(groups)) {
		keys := groups[d]
		sort.Strings(keys)
		s.retryGen++
		gen := s.retryGen
		for _, k := range keys {
			n := s.g.nodes[k]
			n.ext().retryGen = gen
			s.dirty(n)
		}
		s.armRetry(d, &job{kind: jobRetry, keys: keys, gen: gen, live: len(keys)})
	}
}

// clearFailure clears n's failure, which it is attempted again for (or
// superseded by), and with it the retry armed for it.
func (s *Scheduler) clearFailure(n *node) {
	if n.x != nil {
		n.x.failed = nil
	}
	s.disarm(n)
}

// disarm drops n's armed retry, if any, since n was changed, deleted or
// applied: the retry's timer is stopped once none of its values needs it.
func (s *Scheduler) disarm(n *node) {
	if n.retryGen() == 0 {
		return
	}
	s.qmu.Lock()
	if j := s.retries[n.x.retryGen]; j != nil {
		if j.live--; j.live <= 0 {
			delete(s.retries, j.gen)
			j.timer.Stop()
		}
	}
	s.qmu.Unlock()
	n.x.retryGen = 0
}

func (s *Scheduler) armRetry(d time.Duration, j *job) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed {
		return
	}
	var t clock.Timer
	// The callback may run under a fake clock's lock while armRetry holds
	// qmu: it must not take qmu synchronously. It records the due retry at
	// once, though, so that retries due together are run in the order they
	// were armed (see retryDue), not in the order goroutines happen to run.
	// The worker runs due retries before the next queued job, so a
	// transaction committed after the clock passed a retry's time sees it
	// done.
	t = s.opts.Clock.AfterFunc(d, func() {
		s.rmu.Lock()
		s.retryDue = append(s.retryDue, j)
		s.rmu.Unlock()
		select {
		case s.signal <- struct{}{}:
		default:
		}
	})
	j.timer = t
	s.retries[j.gen] = j
}

// HoldRetries keeps the retries that come due from running until the
// returned release is called (once every hold is released; calling it
// again does nothing). A retry acts on the state the last committed
// transaction gave the scheduler; a caller that knows that state is
// behind what it has judged since, and could not commit (an event
// aborted), holds them until it commits its verdict. Transactions run as
// usual meanwhile, and a held retry runs, if its values still need it,
// once released.
func (s *Scheduler) HoldRetries() (release func()) {
	s.rmu.Lock()
	s.retryHolds++
	s.rmu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.rmu.Lock()
			s.retryHolds--
			s.rmu.Unlock()
			select {
			case s.signal <- struct{}{}:
			default:
			}
		})
	}
}

// dueRetries takes the retries whose time has come, oldest armed first;
// none while they are held.
func (s *Scheduler) dueRetries() []*job {
	s.rmu.Lock()
	if s.retryHolds > 0 {
		s.rmu.Unlock()
		return nil
	}
	due := s.retryDue
	s.retryDue = nil
	s.rmu.Unlock()
	if len(due) == 0 {
		return nil
	}
	s.qmu.Lock()
	for _, j := range due {
		delete(s.retries, j.gen)
	}
	s.qmu.Unlock()
	slices.SortFunc(due, func(a, b *job) int { return cmp.Compare(a.gen, b.gen) })
	return due
}
