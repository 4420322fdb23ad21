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
// conflicts) and add the LabelManagedBy label; Delete deletes it, an object
// already gone counting as deleted. Retrieve lists the objects carrying the
// label, so a downstream resync re-creates what was deleted behind the
// scheduler's back and re-applies what was changed, and deletes labelled
// objects no longer desired.
//
// Values are compared with Equivalent: against a live object only on the
// fields the desired value sets, so defaults the API server fills in,
// server-owned metadata and status do not make a value look changed.
//
// # Dependencies
//
// A value depends on the keys listed, comma separated, in its
// AnnotationDependsOn annotation (DependsOn sets it). The keys may be other
// objects' keys or the keys of any other descriptor's values, such as an
// operator's own markers. The annotation is applied with the object, so the
// dependencies stay visible on the server.
//
// # Limitations
//
// A resync does not notice fields added behind the scheduler's back that
// the desired value does not set, and zero scalars in a desired value count
// as unset when compared with a live object (see Equivalent). Changes to immutable fields fail unless
// Options.RecreateOnImmutable is set.
package kubedescriptor
