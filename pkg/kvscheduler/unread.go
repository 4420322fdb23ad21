package kvscheduler

import "fmt"

// Failed reads: a descriptor whose Retrieve failed in a transaction gets
// no operation decided on what it could not see, and neither does a value
// whose dependencies it may hide.

// markUnread records that d's Retrieve failed: what the scheduler last
// believed stays as it was, and no operation of the descriptor runs in this
// transaction on the strength of it.
func (s *Scheduler) markUnread(rec *TxnRecord, d *regDescriptor, err error) {
	re := &RetrieveError{Descriptor: d.Name, Err: err}
	if s.unread == nil {
		s.unread = map[string]*RetrieveError{}
	}
	s.unread[d.Name] = re
	rec.Errors = append(rec.Errors, fmt.Errorf("kvscheduler: %w", re))
}

// unreadFor returns the failed Retrieve that forbids operations on n in
// this transaction: that of its descriptor or of its base's.
func (s *Scheduler) unreadFor(n *node) *RetrieveError {
	if len(s.unread) == 0 {
		return nil
	}
	// A value without a descriptor (a property, a notified value no
	// descriptor claims) is read by none: only its base's read can hide it.
	if n.d != nil {
		if re := s.unread[n.d.Name]; re != nil {
			return re
		}
	}
	if b := s.g.nodes[s.g.baseKey(n)]; b != nil && b.d != nil {
		return s.unread[b.d.Name]
	}
	return nil
}

// unreadDeps returns a failed Retrieve of this transaction that could
// hide what n depends on: the descriptor of an exact dependency's key or
// of a provider, or, for an any-of dependency no read value meets, any
// failed one (it may hold a value that meets it). Whether n's
// dependencies are met is then unknown. Ordering-only dependencies count
// only with ordering (see depsRead).
func (s *Scheduler) unreadDeps(n *node, ordering bool) *RetrieveError {
	if len(s.unread) == 0 {
		return nil
	}
	for _, dep := range n.deps {
		if dep.Kind == OrderingOnly && !ordering {
			continue
		}
		var re *RetrieveError
		if dep.Key != "" {
			if d, err := s.reg.owner(dep.Key); err == nil && d != nil {
				re = s.unread[d.Name]
			}
		} else {
			metByRead := false
			s.g.providers(n, dep, func(p *node) bool {
				metByRead = p.avail && s.unreadFor(p) == nil
				return !metByRead
			})
			if !metByRead {
				for name, e := range s.unread {
					if re == nil || name < re.Descriptor {
						re = e // the first by name, to be told the same every time
					}
				}
			}
		}
		if re != nil {
			return re
		}
	}
	return nil
}
