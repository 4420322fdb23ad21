// Package kubedescriptor makes Kubernetes objects values of the KV
// scheduler (package kvscheduler): a descriptor per kind creates and updates
// objects by server-side apply under one field manager, deletes them,
// retrieves the objects it manages so that resyncs repair drift, and orders
// objects by the dependencies their users declare.
//
// # Keys
//
// An object's key is "<group>/<kind>/<namespace>/<name>", for example
// "apps/Deployment/shop/web" or "core/ConfigMap/shop/web-config". The core
// group (whose real name is empty) is written "core" and cluster-scoped
// objects have the namespace "_": an empty segment would make keys hard to
// read, and namespaces are DNS labels, which cannot be "_". The version is
// not part of the key because one object is served under every version of
// its kind. Key, KeyFor and ParseKey build and read keys; KeyPrefix is the
// prefix a kind's descriptor claims.
//
// # Values
//
// A value is a runtime.Object of the descriptor's kind, typed (for example
// *corev1.ConfigMap) or *unstructured.Unstructured. Create and Update
// server-side apply it with the descriptor's field manager (forcing
// conflicts) and add the LabelManagedBy label; Create first refuses an
// existing object that does not carry the label (NotManagedError) unless
// Options.Adopt. Delete deletes the object with the UID it was applied or
// retrieved with, in the background (Options.PropagationPolicy); an object
// already gone, or replaced by another of the same name, counts as deleted.
// Each apply also stamps the object with AnnotationAppliedAs, naming the
// field manager and the object's own key, because the label alone is
// copied with the object: Retrieve lists the objects carrying the label
// that the descriptor applied (the stamp names them, or, unstamped, their
// managedFields hold its Apply), so a downstream resync
// re-creates what was deleted behind the scheduler's back and re-applies what
// was changed, and deletes labelled objects no longer desired. Every
// request of these callbacks is made under the callback's context, bounded
// by Options.Timeout: cancelling a blocking Commit, or closing the
// scheduler, ends the request in flight.
//
// Drift is judged on the fields the descriptor's field manager owns: after
// every apply the descriptor keeps what the server stored in those fields
// (the managedFields entry of its Apply, with their values), and a live
// object whose owned fields hold anything else has drifted, zero values
// included (a desired `replicas: 0` scaled up out of band is repaired).
// Defaults the server fills in are part of what it stored, and fields other
// managers own (an injected env entry, an annotation) are not looked at, so
// neither causes a re-apply. Objects found without such a record (after a
// restart) are checked against a server-side dry run of their desired
// value, once each; a read sends those dry runs together, a few at a time,
// so the first resync after a restart does not wait a round trip per
// object. A field the server writes from another the value sets (a
// Secret's data from its stringData) is owned by no manager: once someone
// else has written the object since the descriptor saw it hold its value
// (a later resourceVersion), a server-side dry run of the applied value
// tells whether an apply would change it (anything outside metadata and
// status), once per such version; the descriptor's own writes cost none.
// Two desired values are compared with Equivalent.
//
// # Dependencies
//
// A value depends on the keys listed, comma separated, in its
// AnnotationDependsOn annotation (DependsOn sets it), and is created after
// the keys listed in its AnnotationOrderedAfter annotation (OrderedAfter
// sets it), ordering-only dependencies that it outlives. The keys may be other
// objects' keys or the keys of any other descriptor's values, such as an
// operator's own markers. The annotation is applied with the object, so the
// dependencies stay visible on the server.
//
// # Limitations
//
// A resync does not notice fields added behind the scheduler's back that
// the desired value does not set (they are another manager's). A field
// owned whole as an empty map or list when applied is checked for presence
// only. Changes to immutable fields fail unless Options.RecreateOnImmutable
// is set.
package kubedescriptor
