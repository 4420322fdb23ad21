package dependents

import "github.com/lariat-dev/lariat/pkg/kvscheduler"

// An object its owner no longer wants is deleted by the scheduler; when
// the delete fails (forbidden, a webhook refusing it), the object stays,
// as it must, but no owner's objects name it any more, so without this
// the owner would read Ready while an object it made lingers. The owner
// keeps such objects as leaving until the scheduler no longer has them,
// and its summary names each whose delete failed.

// leavingOf returns the objects the owner's last desired state prev kept
// or was still seeing leave, that d does not want, and that the
// scheduler still has.
func (h *loopHandler[T]) leavingOf(key string, prev, d *desired) []objState {
	if prev == nil {
		return nil
	}
	var out []objState
	for _, l := range [][]objState{prev.objects, prev.leaving} {
		for _, o := range l {
			if o.contested != "" || o.stale != "" || hasValue(d, o.key) {
				continue
			}
			if other := h.childOf[o.key]; other != "" && other != key {
				continue // another owner's now
			}
			if h.sched.GetValueStatus(o.key).State == kvscheduler.NonExistent {
				continue
			}
			out = append(out, objState{key: o.key, label: o.label})
		}
	}
	return out
}

// failedLeaving returns, for the summary of the owner at ownerKey, each
// object leaving it (see leavingOf) whose delete failed, with the error,
// unless another owner keeps the object now.
func (d *Dependents) failedLeaving(ownerKey string, leaving []objState) []string {
	var out []string
	for _, o := range leaving {
		st := d.sched.GetValueStatus(o.key)
		if st.State != kvscheduler.Failed && st.State != kvscheduler.Retrying {
			continue
		}
		if owner, ok := d.reports.ownerOf(o.key); ok && owner != ownerKey {
			continue
		}
		out = append(out, o.label+": no longer wanted, and its delete failed (it is kept): "+d.failure(st.Error))
	}
	return out
}
