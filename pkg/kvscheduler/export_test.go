package kvscheduler

import (
	"fmt"
	"sort"
)

// WaitingDeletes returns the number of entries in the scheduler's list of
// deletes waiting for a dependent to go. Call it only while the scheduler
// is idle.
func WaitingDeletes(s *Scheduler) int {
	n := 0
	for _, ws := range s.waiters {
		n += len(ws)
	}
	return n
}

// BeforeDequeue makes the scheduler's goroutine call f right before it
// takes the next queued job, after its check for due retries.
func BeforeDequeue(s *Scheduler, f func()) {
	s.beforeDequeue.Store(&f)
}

// QueueLen returns the number of jobs queued (not taken yet).
func QueueLen(s *Scheduler) int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue)
}

// BeforeWatchRegistered makes WatchValueStatus call f once it has found
// the scheduler not closed, right before it registers the watch.
func BeforeWatchRegistered(s *Scheduler, f func()) {
	s.beforeWatch.Store(&f)
}

// NodesKeepingRemoved returns the keys whose nodes still refer to a node
// removed from the graph (as the remembered node of their first
// dependency). Call it only while the scheduler is idle.
func NodesKeepingRemoved(s *Scheduler) []string {
	var out []string
	for k, n := range s.g.nodes {
		if n.dep0 != nil && n.dep0.removed {
			out = append(out, k)
		}
	}
	return out
}

// SetWalkBound bounds the scheduler's walks to frames frames (0: the
// default, 64 per value of the graph plus 64), so that a test can make a
// walk exceed its bound. Call it only while the scheduler is idle.
func SetWalkBound(s *Scheduler, frames int) {
	s.walkBound.Store(int64(frames))
}

// AfterJob makes the scheduler's goroutine call f after each job and each
// retry, before the job's result is delivered.
func AfterJob(s *Scheduler, f func()) {
	s.afterJob.Store(&f)
}

// CheckModel compares, for every node of the graph, the fields a step of
// issue 25 is replacing with what the model derives them from (see
// docs/kvmodel-plan.md), and checks the failure part of the model: a
// blocked value has its error and its count of attempts, and is never
// REMOVED (rule 4 drops a value found gone whose request is a delete,
// failure and all). It returns the first disagreement. Call it only on
// the scheduler's goroutine between jobs (see AfterJob).
func CheckModel(s *Scheduler) error {
	for _, k := range sortedNodeKeys(s) {
		n := s.g.nodes[k]
		if want := n.availModel(); n.avail != want {
			return fmt.Errorf("%s: avail %v, the model says %v (sb %v, under %v, blocked %v, lastOp %v, state %v)",
				k, n.avail, want, n.sb, n.under, n.blocked(), n.lastOp, n.state)
		}
		if n.blocked() && (n.err == nil || n.attempt() == 0) {
			return fmt.Errorf("%s: blocked without its failure (err %v, attempt %d, lastOp %v, state %v)", k, n.err, n.attempt(), n.lastOp, n.state)
		}
		if n.blocked() && n.state == Removed {
			return fmt.Errorf("%s: blocked and REMOVED (err %v, retry %d, lastOp %v, want %v, sb %v, last %v)", k, n.err, n.retryGen(), n.lastOp, n.want, n.sb, n.last)
		}
	}
	return nil
}

func sortedNodeKeys(s *Scheduler) []string {
	keys := make([]string, 0, len(s.g.nodes))
	for k := range s.g.nodes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckPublished compares, for every node of the graph, the status
// published after the last job with the one its fields give now (its
// own part: state, last operation, error, base, descriptor, invalid
// fields): a change of them that no walk marked dirty leaves a stale
// status. Call it only on the scheduler's goroutine between jobs (see
// AfterJob).
func CheckPublished(s *Scheduler) error {
	w := &walker{s: s, g: s.g, seq: s.seq}
	var sc statusScratch
	for _, k := range sortedNodeKeys(s) {
		n := s.g.nodes[k]
		pub := n.published()
		if pub == nil {
			continue
		}
		st := w.statusInto(n, &sc)
		if st.State != pub.State || st.LastOp != pub.LastOp || !sameError(st.Error, pub.Error) || st.BaseKey != pub.BaseKey ||
			st.Descriptor != pub.Descriptor {
			return fmt.Errorf("%s: published %v/%v/%v (base %q), its fields say %v/%v/%v (base %q)",
				k, pub.State, pub.LastOp, pub.Error, pub.BaseKey, st.State, st.LastOp, st.Error, st.BaseKey)
		}
	}
	return nil
}
