package apply

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// ownerCheck tells, for the listed objects of a set that a prune is about
// to delete, which were applied for another, newer owner of the same name.
// A set is named by its owner's kind, namespace and name, so an owner
// deleted and created again names the same set; a pass for the old owner
// that runs late (a deletion pass that confirmed the owner gone before the
// new one was created, or a stale pass of another replica) would otherwise
// prune the new owner's objects by the set's label.
//
// An object records the owner it was applied for (AnnotationOwnerUID, or
// its owner reference). An object applied for the owner this pass acts for
// is pruned as usual. Any other is pruned only unless the owner, read from
// the API server after the object was listed, is live under that object's
// UID: then it belongs to the live owner. Read after the list, the owner
// is at least as new as every listed object, so an object of a newer owner
// is never missed. For a set named by OwnerKey (the owner gone, its UID
// unknown), an object that records no owner is spared too while an owner
// of that name lives: nothing says it is the gone owner's, and the live
// owner's own Apply prunes it if it does not want it.
type ownerCheck struct {
	a    *Applier
	id   *setIdentity
	read bool      // the owner was read
	live types.UID // the owner's UID when read, "" if gone or being deleted
}

// spares reports whether m, listed as the set's and not wanted, must stay
// because it was applied for a live owner other than this pass's.
func (o *ownerCheck) spares(ctx context.Context, m metav1.Object) (bool, error) {
	id := o.id
	if id.ownerID == (objectID{}) {
		return false, nil // an ownerless set: no owner to tell apart
	}
	uid := appliedFor(m, id.ownerID)
	if id.ownerUID != "" && (uid == "" || uid == id.ownerUID) {
		// Applied for this owner, or before owners' UIDs were recorded
		// (as this owner's, as Apply always treated them).
		return false, nil
	}
	if !o.read {
		live, err := o.a.liveOwnerUID(ctx, id.ownerID)
		if err != nil {
			// Whose the object is cannot be told: it stays, and the
			// next pass decides again.
			return false, fmt.Errorf("read owner %s to tell whose the object is: %w", id.ownerDesc, err)
		}
		o.live, o.read = live, true
	}
	if o.live == "" || o.live == id.ownerUID {
		return false, nil // no other owner lives: the object is a gone owner's
	}
	return uid == o.live || uid == "", nil
}

// appliedFor returns the UID of the owner m was applied for: its
// AnnotationOwnerUID, else the UID of its owner reference to owner, else "".
func appliedFor(m metav1.Object, owner objectID) types.UID {
	if uid := m.GetAnnotations()[AnnotationOwnerUID]; uid != "" {
		return types.UID(uid)
	}
	for _, ref := range m.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == owner.gk.Group && ref.Kind == owner.gk.Kind && ref.Name == owner.name {
			return ref.UID
		}
	}
	return ""
}
