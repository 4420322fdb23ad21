package dependents

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// drifted tells whether obj, the object at key as an event shows it (prev
// the version before, or nil), was changed behind the registration's back
// (Options.RepairDrift): the scheduler holds it as applied, the loop is
// not changing it itself (an event of the version before its own update
// is no drift), and it is not equivalent to the value last desired:
// judged as the descriptor judges it (kubedescriptor.Landings.Drifted)
// when it knows what its last apply stored (or, for a version someone else
// wrote since, by the dry run of the repair's read), else by the fields
// the value sets.
func (h *loopHandler[T]) drifted(key string, prev, obj runtime.Object) bool {
	if !h.repairDrift || obj == nil || h.isUpdating(key) {
		return false
	}
	d := h.desired[h.childOf[key]]
	if d == nil || d.held { // a held value is never written back (see heldvalues.go)
		return false
	}
	want, ok := d.values[key]
	if !ok || h.sched.GetValueStatus(key).State != kvscheduler.Configured {
		return false
	}
	if drifted, known := h.landings.Drifted(key, obj); known {
		// What the server made of the last apply, in the fields this
		// field manager owns: a field the server rewrites (stringData
		// stored as data) is no drift, nor a field another manager owns.
		// A write by someone else since the last landing can still have
		// changed a field the apply writes and no manager owns (data
		// written from stringData): the repair's Retrieve judges it with
		// one dry run (kubedescriptor's outside.go).
		return drifted || h.landings.WrittenSince(key, prev, obj)
	}
	return !kubedescriptor.Equivalent(obj, want)
}
