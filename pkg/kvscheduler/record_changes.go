package kvscheduler

// ChangedStatuses returns the statuses the transaction changed, as
// published right after it, in the order they were published; a value the
// transaction removed is returned with state Removed (and its descriptor,
// base key and last operation from before). It is what a status watch
// would have delivered for the transaction, read from the record instead,
// so that a reader of the history (a dashboard, say) follows the statuses
// without a watch. It is empty when history is disabled. Like the statuses
// returned by ValueStatuses, their slices are shared and must not be
// modified.
func (r *TxnRecord) ChangedStatuses() []ValueStatus {
	out := make([]ValueStatus, 0, len(r.changes))
	for _, c := range r.changes {
		if c.after != nil {
			out = append(out, *c.after)
			continue
		}
		st := ValueStatus{Key: c.key, State: Removed}
		if c.before != nil {
			st.LastOp, st.Descriptor, st.Derived, st.BaseKey = c.before.LastOp, c.before.Descriptor, c.before.Derived, c.before.BaseKey
		}
		out = append(out, st)
	}
	return out
}
