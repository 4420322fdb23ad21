// Package apply makes a set of objects exist exactly as desired: every object
// of the set is written with server-side apply under one field manager, and
// objects the set held before but no longer does are deleted (pruned),
// including kinds that dropped out of the set entirely. This is what
// generating handlers use: an owner's handler returns the objects it wants,
// and Apply converges the cluster on them.
//
// A set is identified by its owner (optional) and a set ID. Its objects carry
// a label with the set's hash, so they can be found with a label selector; an
// inventory ConfigMap records which kinds the set has ever held and in which
// namespaces, so pruning knows where to look even for kinds the caller no
// longer mentions, and lists only in those namespaces: an operator whose RBAC
// covers only its own namespaces can apply and prune.
//
// An object's identity is its group, kind, namespace and name, never its
// version: a set may move a child from one served version of its kind to
// another (autoscaling/v1 to autoscaling/v2), and an owner read through
// either version names the same set. Pruning lists each kind through its
// preferred served version. A kind that is no longer served (its CRD
// deleted, and its objects with it) is pruned as empty and leaves the
// inventory, even when the factory's discovery still maps it: a listing that
// answers NotFound re-reads discovery for the kind (rate limited) first.
//
// Nothing is pruned on incomplete information: a whole set is pruned for a
// gone owner (Set.OwnerKey, no objects) only after a live read confirms the
// owner is gone or being deleted, since a filtered cache also loses objects
// that merely stopped matching (see ErrOwnerExists). Nor is what the set
// did not create taken: a desired object whose label names another set is
// left as it is (see ClaimedError and Set.TakeOver), and so is one that
// exists without any set's label, made by hand or by another tool (see
// NotManagedError; Set.Adopt, Set.AdoptKinds and LabelAdopt take it over
// explicitly). Such an object is never written to, nor pruned later. Every
// write is conditional on what the set read: an apply carries the
// resourceVersion the set checked (or, for an object it read as absent,
// one no object has, so that it only creates), and a recreate's delete the
// UID and resourceVersion. A pruned object is deleted only as listed, or
// after a read shows it still carries the set's label and records the
// owner it was listed with; an inventory is deleted only as the pass read
// it (it records the owner it was last written for, AnnotationOwnerUID).
// An owner created again under the same name names the same set but is
// another owner: objects record the UID of the owner they were applied for
// (AnnotationOwnerUID), and no pass for one owner prunes what was applied
// for a live other (see Plan.Kept).
//
// For a port from wrangler's apply: Set.NoDelete and Set.NoDeleteKinds are
// WithNoDelete and WithNoDeleteGVK, Set.NoOwnerReference is the generating
// handlers' NoOwnerReference, and Set.RecreateKinds and
// Set.RecreateImmutable replace reconcilers that return ErrReplace. The
// owner's reference is the controller reference (WithOwnerReference with
// controller true) unless another controller is already there.
package apply
