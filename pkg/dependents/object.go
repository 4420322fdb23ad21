package dependents

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// ReadyFunc tells whether a dependent, as the API server shows it (live),
// is ready, and if not, why ("1/3 replicas available"). It is called on
// the event loop's goroutine and must not block. live is a copy of the
// informer cache's object, the rule's own: what it writes to it is seen
// by no one else.
type ReadyFunc func(live runtime.Object) (ready bool, why string)

// Object is one desired object of an owner, with what it depends on. Build
// it with Of and the chained methods; the handler returns a list of them.
type Object struct {
	obj       runtime.Object
	after     []*Object
	requires  []*Object
	owners    []string // "namespace/name" of other owners it requires
	available []string // "namespace/name" of other owners it requires latched
	readyWhen ReadyFunc
	excluded  bool
}

// Of returns the desired object obj (a typed or unstructured Kubernetes
// object of one of Options.Kinds, in the owner's namespace for namespaced
// kinds, which is set when obj names none; with no namespace for
// cluster-scoped kinds), with no dependencies and the default readiness
// rule of its kind (see DefaultReady).
func Of(obj runtime.Object) *Object { return &Object{obj: obj} }

// After orders o after others, objects of the same owner: o is created
// once they are ready, and deleted before them. It is an ordering-only
// dependency: o stays when one of them goes or stops being ready.
func (o *Object) After(others ...*Object) *Object {
	o.after = append(o.after, others...)
	return o
}

// Requires makes o need others, objects of the same owner: o is created
// once they are ready, and deleted (it waits, PENDING) whenever one of
// them goes or stops being ready.
func (o *Object) Requires(others ...*Object) *Object {
	o.requires = append(o.requires, others...)
	return o
}

// RequiresOwner makes o need another owner of the same kind, handled by
// the same registration: o is created once every object of that owner is
// ready, and deleted whenever one stops being ready or the owner goes.
// namespace is the owner's ("" for a cluster-scoped owner kind).
func (o *Object) RequiresOwner(namespace, name string) *Object {
	o.owners = append(o.owners, ownerKey(namespace, name))
	return o
}

// RequiresOwnerAvailable makes o need another owner of the same kind,
// handled by the same registration, to be available: o is created once
// every object of that owner is ready, and from then on the owner stays
// available (latched) while it exists and its own requirements
// (RequiresOwner, RequiresOwnerAvailable) are met, whatever its objects'
// readiness: an outage of its objects does not take o down, its deletion
// does, and so does the loss of what it requires, down a chain. Once its
// requirements failed, it is available again only when its objects are
// all ready again. The latch lives in the registration's memory: after a
// restart, an owner is available once its objects are all ready.
func (o *Object) RequiresOwnerAvailable(namespace, name string) *Object {
	o.available = append(o.available, ownerKey(namespace, name))
	return o
}

// ReadyWhen replaces the readiness rule of o: its dependents wait until f
// says the live object is ready.
func (o *Object) ReadyWhen(f ReadyFunc) *Object {
	o.readyWhen = f
	return o
}

// IncludeWhen keeps o only if wanted: an object not wanted is not
// created, and deleted if it exists. Its dependents treat it as they do
// an object that goes (see After and Requires).
func (o *Object) IncludeWhen(wanted bool) *Object {
	o.excluded = !wanted
	return o
}

func ownerKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
