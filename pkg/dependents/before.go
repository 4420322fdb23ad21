package dependents

import (
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// Readiness across a restart. An owner's markers (its owner marker, the
// RequiresOwnerAvailable latch) live only in the scheduler, and a
// readiness rule (ReadyWhen) only in the handler: after a restart, an
// owner whose handler fails is judged by no rule at all, and a latch taken
// before an outage is not known. Reading either as "not ready" takes down
// what other owners require of it, on a verdict nobody gave: the restart
// alone would delete objects that are still wanted.
//
// What the API server keeps says what the markers were: an object that
// requires a marker carries the marker's key in its depends-on annotation,
// and the scheduler deletes such an object once the marker is gone. So an
// object of this field manager that still names the marker shows that the
// marker was put when the replica stopped. An object whose deletion is
// under way (a deletionTimestamp, its DELETE held by a finalizer) shows
// nothing: the scheduler deletes a requirer once the marker is gone, so
// its deletion may be exactly the marker's withdrawal, and reading it as
// evidence would hand a gone marker to the owner (even to an owner created
// again under the name), on which new requirers would then be created.
// Missing evidence is the safe side: the owner is judged not ready until
// its handler answers, its objects are kept, and nothing new is created
// on it. Only the owner of the current UID inherits it: it must keep
// objects naming its UID (an owner deleted and created again under its
// name while no replica ran has none, so its latch starts open, and a
// requirer left by the old owner's readiness waits for the new one's).
//
// No marker is put where none is named: a new requirer of an owner that
// was not ready (or not available) before the restart is not created until
// the owner's handler answers and its objects are judged by its rules.

// beforeRestart is what the live objects at a resync show of the markers
// put before it: the marker keys they depend on, and the owners (by key)
// with the UIDs their objects name.
type beforeRestart struct {
	named  map[string][]runtime.Object // by marker key: the live objects naming it
	owners map[string]map[string]bool
	// vouches confirms that obj's annotation naming markerKey is the
	// field manager's own (see vouch.go); nil trusts the cache.
	vouches func(obj runtime.Object, markerKey string) (bool, error)
	checked map[string]bool // by marker key: the verdict of vouches
	err     error           // a vouch that could not be read: the resync is not committed
}

// readBeforeRestart indexes live, the objects of the registration's kinds
// at a resync (those of fieldManager only: no other manager's object
// speaks for this registration's markers).
func readBeforeRestart(live map[string]runtime.Object, fieldManager, ownerKind string) *beforeRestart {
	b := &beforeRestart{named: map[string][]runtime.Object{}, owners: map[string]map[string]bool{}, checked: map[string]bool{}}
	for _, obj := range live {
		m, err := meta.Accessor(obj)
		if err != nil || m.GetLabels()[kubedescriptor.LabelManagedBy] != fieldManager || m.GetDeletionTimestamp() != nil {
			continue
		}
		without := heldWithout(m) // kept while absent: no evidence (see heldwithout.go)
		for _, k := range kubedescriptor.DependsOnKeys(m) {
			if !without[k] {
				b.named[k] = append(b.named[k], obj)
			}
		}
		if kind, owner, uid, ok := parseOwner(obj); ok && kind == ownerKind {
			if b.owners[owner] == nil {
				b.owners[owner] = map[string]bool{}
			}
			b.owners[owner][uid] = true
		}
	}
	return b
}

// marked tells whether the marker at markerKey of the owner at ownerKey,
// of uid, was put before the restart: an object requires it by an
// annotation the field manager applied, and the owner keeps objects
// naming its UID. A nil beforeRestart (outside a resync) knows nothing.
func (b *beforeRestart) marked(ownerKey, uid, markerKey string) bool {
	if b == nil || len(b.named[markerKey]) == 0 || !b.owners[ownerKey][uid] {
		return false
	}
	if b.vouches == nil {
		return true
	}
	if v, ok := b.checked[markerKey]; ok {
		return v
	}
	for _, obj := range b.named[markerKey] {
		ok, err := b.vouches(obj, markerKey)
		if err != nil {
			b.err = errors.Join(b.err, err)
			return false
		}
		if ok {
			b.checked[markerKey] = true
			return true
		}
	}
	b.checked[markerKey] = false
	return false
}
