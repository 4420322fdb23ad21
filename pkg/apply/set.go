package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Set names one desired set: the objects an owner's handler generates.
type Set struct {
	// Owner, when set, is added to the owner references of every object
	// where that is legal (same namespace, or a cluster-scoped owner),
	// gives its namespace to namespaced objects that have none, and
	// identifies the set together with ID.
	Owner runtime.Object
	// OwnerKey identifies the owner when its object is gone, to prune its
	// sets after it was deleted; it is ignored when Owner is set. Apply
	// with OwnerKey and no objects prunes only once a live read confirms
	// the owner is gone or being deleted, or that an object of its name is
	// another owner, with another UID than the set was applied for (see
	// ErrOwnerExists).
	OwnerKey *ObjectKey
	// ID tells apart several sets of one owner (or names an ownerless set).
	ID string
	// NoDelete keeps the objects that leave the set instead of pruning
	// them (wrangler's WithNoDelete): for children that must outlive the
	// handler's wish, such as data volumes. They keep the set's label and
	// stay in its inventory, so a later Apply without NoDelete prunes
	// them. A whole set pruned with NoDelete deletes nothing.
	NoDelete bool
	// NoDeleteKinds keeps the objects of these kinds that leave the set
	// (wrangler's WithNoDeleteGVK); the set's other kinds are pruned as
	// usual.
	NoDeleteKinds []schema.GroupKind
	// NoOwnerReference writes no owner reference to the set's objects
	// (wrangler's NoOwnerReference): the owner still names the set, and
	// its objects are still pruned through the set's inventory, but the
	// garbage collector does not delete them with the owner.
	NoOwnerReference bool
	// RecreateKinds are the kinds whose existing objects are deleted and
	// created again when the API server rejects their apply as Invalid
	// because fields are immutable (wrangler's ErrReplace reconcilers): a
	// Job's template, a Deployment's selector, a Service's clusterIP
	// cannot change in place. Other Invalid errors are returned and the
	// object stays, as with RecreateImmutable. The delete carries the old
	// object's UID as a precondition.
	RecreateKinds []schema.GroupKind
	// RecreateImmutable recreates objects of any kind whose apply the
	// API server rejects as Invalid only because fields are immutable
	// (every cause says "immutable" or "may not change"); other Invalid
	// errors are returned, since a recreated object would fail the same
	// way and be lost.
	RecreateImmutable bool
	// OwnerNamespaceOnly refuses objects in another namespace than a
	// namespaced owner's (no owner reference can reach them, so only the
	// set's inventory ties them to the owner); ClusterScopedRefused
	// refuses cluster-scoped objects of a namespaced owner. A refused
	// object fails the whole Apply, which then prunes nothing. Generating
	// handlers set both unless their options say AllowCrossNamespace or
	// AllowClusterScoped (wrangler's names, the only way to set them there).
	OwnerNamespaceOnly   bool
	ClusterScopedRefused bool
	// TakeOver names other sets of the same owner (by ID) whose objects
	// this set may take when it names them: to rename a set (a generating
	// handler) without losing its children. Objects of any other set are
	// refused with a *ClaimedError. TakeOver takes only what those sets
	// hold: an object that belongs to no set is refused as without it
	// (see Adopt). While the owner lives the named sets keep what this
	// set did not take (another handler may still hold it); a whole set
	// pruned because its owner is gone (OwnerKey, no objects) prunes the
	// named sets with it, objects and inventories, each after its own
	// check that the owner is gone.
	TakeOver []string
	// Adopt lets the set take over an existing object of any kind that
	// belongs to no set (made by hand or by another tool, or taken out of
	// its set by removing its LabelSet); AdoptKinds does so for the
	// objects of these kinds only. Without either, such an object is
	// taken over only when its user labelled it LabelAdopt=true; any
	// other is refused with a *NotManagedError and left as it is. An
	// adopted object is the set's from then on: applied as the set says,
	// and pruned when the set no longer names it or its owner goes. An
	// object being adopted is never recreated (RecreateKinds,
	// RecreateImmutable): until the set applied it once it is someone
	// else's, and an apply rejected for an immutable field is returned.
	// Wrangler's apply adopts every such object; this is the opt-in for
	// ports that relied on it.
	Adopt      bool
	AdoptKinds []schema.GroupKind
}

// ObjectKey identifies an object in a Plan, or a gone owner in Set.OwnerKey.
// Its version says through which version the object was read or written;
// Apply compares objects by group, kind, namespace and name only, so an
// object moved to another version of its kind is still the same object.
type ObjectKey struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

// String returns "Kind namespace/name" ("Kind name" for cluster-scoped
// objects), for logs and plans.
func (k ObjectKey) String() string {
	if k.Namespace == "" {
		return fmt.Sprintf("%s %s", k.GVK.Kind, k.Name)
	}
	return fmt.Sprintf("%s %s/%s", k.GVK.Kind, k.Namespace, k.Name)
}

// Plan is what Apply would do.
type Plan struct {
	Create    []ObjectKey
	Update    []ObjectKey
	Unchanged []ObjectKey
	Delete    []ObjectKey
	// Recreate lists objects that are deleted and created again because
	// their apply was rejected (see Set.RecreateKinds). A dry run lists
	// an object here when a dry-run apply was rejected and the set allows
	// recreating it.
	Recreate []ObjectKey
	// Kept lists objects that left the set but were not pruned: because
	// they were applied for a live, newer owner of the same name (an
	// owner deleted and created again; see AnnotationOwnerUID), because
	// another field manager wrote them (another operator's set of the
	// same owner and ID), or because of Set.NoDelete or Set.NoDeleteKinds.
	Kept []ObjectKey
}
