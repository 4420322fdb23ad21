package kvscheduler

import (
	"slices"
	"strings"
)

// process runs one job on the worker goroutine.
func (s *Scheduler) process(j *job) (*TxnRecord, error) {
	switch j.kind {
	case jobRegister:
		if err := s.reg.check(j.desc); err != nil {
			return nil, err
		}
		waiting := s.hasUnimplemented()
		rd := s.reg.add(j.desc)
		if j.desc.WithMetadata {
			s.smu.Lock()
			s.mdMaps[j.desc.Name] = rd.md
			s.smu.Unlock()
		}
		if !waiting {
			return nil, nil
		}
		rec := s.newRecord(DescriptorRegistration)
		rec.Description = "registered descriptor " + j.desc.Name
		s.converge(rec, false)
		s.finish(rec)
		return rec, nil
	case jobNotify:
		rec := s.newRecord(SBNotification)
		rec.Values = []KeyValuePair{{Key: j.kv.Key, Value: j.kv.Value}}
		s.applyNotification(j.kv)
		s.converge(rec, false)
		s.finish(rec)
		return rec, nil
	case jobRetry:
		rec := s.newRecord(RetryFailedOps)
		for _, k := range j.keys {
			if f := s.failed[k]; f != nil && f.gen == j.gen && f.blocked {
				f.blocked, f.retrying = false, false
				rec.RetryOf = appendUnique(rec.RetryOf, f.seq)
			}
		}
		if len(rec.RetryOf) == 0 {
			s.seq-- // nothing left to retry: do not burn a sequence number
			return nil, nil
		}
		s.converge(rec, false)
		s.finish(rec)
		return rec, nil
	}
	return s.processTxn(j.txn)
}

func (s *Scheduler) processTxn(t *Txn) (*TxnRecord, error) {
	rec := s.newRecord(NBTransaction)
	rec.Description, rec.Resync, rec.Revert = t.description, t.resync, t.revert
	rec.Values = t.values
	var scope map[string]bool // the keys of a scoped resync
	if len(t.resyncKeys) > 0 {
		scope = make(map[string]bool, len(t.resyncKeys))
		for _, k := range t.resyncKeys {
			if !scope[k] {
				scope[k] = true
				rec.ResyncKeys = append(rec.ResyncKeys, k)
			}
		}
	}
	if t.resync != NoResync {
		// A resync attempts every failed value (of its scope) again, but
		// keeps the failures: a value that fails again goes on counting
		// its attempts (and its backoff) instead of starting over with
		// every healing.
		unblocked := make([]string, 0, len(s.failed))
		for k, f := range s.failed {
			if scope == nil || scope[k] {
				f.blocked = false
				unblocked = append(unblocked, k)
			}
		}
		defer func() {
			for _, k := range unblocked {
				if f := s.failed[k]; f != nil && !f.blocked {
					delete(s.failed, k) // not attempted again: nothing left to retry
				}
			}
		}()
	}
	switch {
	case scope != nil:
		s.refreshKeys(rec, rec.ResyncKeys)
	case t.resync == FullResync || t.resync == DownstreamResync:
		s.refresh(rec)
	}
	var undo map[string]*desiredVal
	newDesired := func(v any) *desiredVal {
		return &desiredVal{value: v, retry: t.retry, seq: rec.SeqNum}
	}
	noResync := false
	switch t.resync {
	case DownstreamResync:
	case FullResync, UpstreamResync:
		s.desired = make(map[string]*desiredVal, len(t.values))
		for _, kv := range t.values {
			if kv.Value != nil {
				s.desired[kv.Key] = newDesired(kv.Value)
			}
		}
	default:
		noResync = true
		// Only a revert needs the previous desired values.
		if t.revert {
			undo = make(map[string]*desiredVal, len(t.values))
		}
		for _, kv := range t.values {
			if undo != nil {
				undo[kv.Key] = s.desired[kv.Key]
			}
			if kv.Value == nil {
				delete(s.desired, kv.Key)
				continue
			}
			s.desired[kv.Key] = newDesired(kv.Value)
		}
	}
	failedOps := s.converge(rec, t.revert && noResync)
	reverted := false
	var revertFailed []KeyError
	if len(failedOps) > 0 && t.revert && noResync {
		for k, dv := range undo {
			if dv == nil {
				delete(s.desired, k)
			} else {
				s.desired[k] = dv
			}
		}
		// Statuses follow the restored desired state; nothing is planned
		// unless an undo failed, which gets one more attempt here. What
		// still fails is not reverted: it stays FAILED with its retry.
		revertFailed = s.converge(rec, false)
		reverted = len(revertFailed) == 0
	}
	var unread []*RetrieveError
	for _, re := range s.unread {
		unread = append(unread, re)
	}
	s.unread = nil
	slices.SortFunc(unread, func(a, b *RetrieveError) int { return strings.Compare(a.Descriptor, b.Descriptor) })
	s.finish(rec)
	if len(failedOps) == 0 && len(unread) == 0 {
		return rec, nil
	}
	return rec, &TransactionError{SeqNum: rec.SeqNum, Failed: failedOps, Reverted: reverted,
		RevertFailed: revertFailed, Retrieve: unread}
}

func (s *Scheduler) hasUnimplemented() bool {
	for k := range s.desired {
		if d, err := s.reg.owner(k); d == nil && err == nil {
			return true
		}
	}
	for _, a := range s.actual {
		if a.d == nil && !a.implicit {
			return true
		}
	}
	return false
}

func (s *Scheduler) newRecord(t TxnType) *TxnRecord {
	s.seq++
	return &TxnRecord{SeqNum: s.seq, Type: t, Start: s.opts.Clock.Now()}
}

// finish publishes statuses, schedules retries and records the transaction.
func (s *Scheduler) finish(rec *TxnRecord) {
	s.scheduleRetries(rec)
	rec.changes = s.publishStatuses()
	rec.Stop = s.opts.Clock.Now()
	s.metrics.txn(rec)
	if l := s.opts.Logger; l != nil && l.IsLevelEnabled(s.opts.TxnLogLevel) {
		l.Log(s.opts.TxnLogLevel, rec)
	}
	s.hist.add(rec, s.recStatuses, s.opts.Clock.Now())
}

func appendUnique(xs []uint64, x uint64) []uint64 {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}
