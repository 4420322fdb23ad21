package dependents

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// desired is what is put into the scheduler for one owner.
type desired struct {
	values  map[string]any // scheduler key -> object or marker
	objects []objState     // the included objects, in the handler's order
	left    []objState     // the objects IncludeWhen leaves out (for what waits on them)
	leaving []objState     // the objects no longer wanted the scheduler still has (leaving.go)
	ready   int            // how many of them are ready
	err     error          // the handler's last error (values are older)
	// needs are the markers of the owners its objects require (both
	// kinds): what its latched marker needs.
	needs []string
	// available is the latch: every object was ready once, and the
	// owner's requirements have not failed since (see
	// Object.RequiresOwnerAvailable).
	available bool
	// uid is the owner's: an owner deleted and created again under its
	// name is another owner, whose latch starts open.
	uid string
	// held marks the objects of an owner whose handler failed at the
	// first resync, put as they are (see held.go) until it succeeds.
	held bool
	// deleting marks the desired state of an owner being deleted, frozen
	// (see deleting.go): its objects are held values.
	deleting bool
	// wasReady is, for a held owner, whether its owner marker was put
	// before the restart (see before.go): its readiness rules are unknown.
	wasReady bool
}

// AnnotationOwner names, on each object, the owner it is kept for: its
// kind, "namespace/name" and UID.
const AnnotationOwner = "lariat.dev/dependents-owner"

// objState is one included object of an owner.
type objState struct {
	key   string // scheduler key of the object
	label string // "StatefulSet db", for statuses
	rule  ReadyFunc
	ready bool
	why   string // why it is not ready
	// contested says why another owner keeps the object; stale, that the
	// live object is a deleted owner's. Either way it is not put.
	contested, stale string
	cycle            string // the dependency cycle it is on, if any
	// after are the keys of the owner's objects it requires or is
	// ordered after (see holdNew).
	after []string
	// owners are the keys of the other owners it requires (RequiresOwner):
	// it is held too while their objects are being changed (see holdNew).
	owners []string
}

// clone returns a copy of d that can be changed without changing d: a
// desired state once put is what a transaction committed, and an undone
// transaction puts it back (see undo.go).
func (d *desired) clone() *desired {
	c := *d
	c.values = maps.Clone(d.values)
	c.objects = slices.Clone(d.objects)
	c.left = slices.Clone(d.left)
	c.leaving = slices.Clone(d.leaving)
	c.needs = slices.Clone(d.needs)
	return &c
}

// objectKeys yields the keys of d's objects.
func (d *desired) objectKeys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, o := range d.objects {
			if o.contested != "" { // another owner's
				continue
			}
			if !yield(o.key) {
				return
			}
		}
	}
}

// claimedKeys yields the keys of the objects d's owner keeps: neither
// another owner's nor left by a deleted owner. A stale object is no
// one's until its deletion is seen; then the owners refused it claim it
// in the order they were refused (see refusedOrder), and an owner
// created again under the deleted one's name comes after those that
// waited before it.
func (d *desired) claimedKeys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, o := range d.objects {
			if o.contested != "" || o.stale != "" {
				continue
			}
			if !yield(o.key) {
				return
			}
		}
	}
}

// builder turns a handler's objects into scheduler values.
type builder[T generic.RuntimeMetaObject] struct {
	k        keys
	ownerGVK schema.GroupVersionKind
	scheme   *runtime.Scheme
	kinds    map[schema.GroupKind]bool
	// namespace is Options.Namespace: namespaced objects elsewhere are
	// refused (see place).
	namespace string
	// namespaced tells whether objects of a kind are namespaced (the REST
	// mapper's answer, looked up on first use).
	namespaced func(schema.GroupVersionKind) (bool, error)
}

// gvk returns obj's kind: its TypeMeta's, or the scheme's.
func (b *builder[T]) gvk(obj runtime.Object) (schema.GroupVersionKind, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk, nil
	}
	gvks, _, err := b.scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gvks[0], nil
}

// key returns obj's scheduler key.
func (b *builder[T]) key(obj runtime.Object) (string, error) {
	if obj == nil {
		return "", errors.New("nil object")
	}
	gvk, err := b.gvk(obj)
	if err != nil {
		return "", err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	return kubedescriptor.KeyFor(gvk, m.GetNamespace(), m.GetName()), nil
}

// desired builds the values of the owner at ownerKey from the handler's
// objects, with the readiness that live shows; claim says which objects
// the owner may not put (see claimer), and objectsOf the keys of the
// objects another owner keeps.
func (b *builder[T]) desired(ownerKey string, owner T, objs []*Object, live map[string]runtime.Object,
	claim func(objKey string) (contested, stale string), objectsOf func(ownerKey string) []string) (*desired, error) {
	d := &desired{values: map[string]any{}, uid: string(owner.GetUID())}
	keyOf, labelOf := map[*Object]string{}, map[*Object]string{}
	prepared := make([]metav1.Object, len(objs))
	for i, o := range objs {
		if o == nil || o.obj == nil || isNilPointer(o.obj) {
			return nil, fmt.Errorf("object %d is nil", i)
		}
		m, key, label, err := b.prepare(owner, o.obj)
		if err != nil {
			return nil, err
		}
		if _, dup := d.values[key]; dup {
			return nil, fmt.Errorf("%s is returned twice", label)
		}
		keyOf[o], labelOf[o], prepared[i] = key, label, m
		if !o.excluded {
			st := objState{key: key, label: label, rule: o.readyWhen, owners: slices.Clone(o.owners)}
			if st.contested, st.stale = claim(key); st.contested == "" && st.stale == "" {
				d.values[key] = m
			} else {
				d.values[key] = nil // the duplicate check's; removed below
			}
			d.objects = append(d.objects, st)
		} else {
			d.left = append(d.left, objState{key: key, label: label, why: "not wanted (IncludeWhen)"})
		}
	}
	for i, o := range objs {
		if o.excluded {
			continue
		}
		m := prepared[i]
		st := &d.objects[slices.IndexFunc(d.objects, func(s objState) bool { return s.key == keyOf[o] })]
		if err := b.link(ownerKey, o, m, st, d, keyOf, objectsOf); err != nil {
			return nil, err
		}
		clearHeldWithout(m, live[keyOf[o]])
	}
	onCycle := cycles(objs, labelOf)
	for i, o := range d.objects {
		if o.contested != "" || o.stale != "" {
			delete(d.values, o.key)
		}
		for obj, c := range onCycle {
			if keyOf[obj] == o.key {
				d.objects[i].cycle = c
			}
		}
	}
	d.values[b.k.owner(ownerKey)] = nil // placeholder, set by readiness
	b.readiness(ownerKey, d, live)
	return d, nil
}

// link writes what orders o's object m: the markers it depends on (the
// objects it Requires, its owners' and their availability's) and the
// keys it is ordered after, which its annotations keep across restarts.
// st gets the keys it is ordered after among the objects returned, d
// the markers the owner needs.
func (b *builder[T]) link(ownerKey string, o *Object, m metav1.Object, st *objState, d *desired,
	keyOf map[*Object]string, objectsOf func(ownerKey string) []string) error {
	for _, a := range append(slices.Clone(o.after), o.requires...) {
		if k, ok := keyOf[a]; ok && !a.excluded {
			st.after = append(st.after, k)
		}
	}
	for _, a := range o.after {
		k, ok := keyOf[a]
		if !ok {
			return fmt.Errorf("%s is ordered after an object the handler did not return", keyOf[o])
		}
		if !a.excluded { // nothing to order after
			// The object's own key too, ordering only: after a
			// restart the markers are gone (they live only in the
			// scheduler), and what the objects read back name is
			// all that orders their deletes: the marker alone left
			// them in key order.
			kubedescriptor.OrderedAfter(m, b.k.ready(ownerKey, k), k)
		}
	}
	for _, r := range o.requires {
		k, ok := keyOf[r]
		if !ok {
			return fmt.Errorf("%s requires an object the handler did not return", keyOf[o])
		}
		kubedescriptor.DependsOn(m, b.k.ready(ownerKey, k))
		kubedescriptor.OrderedAfter(m, k) // as for After
	}
	for _, ok := range o.owners {
		kubedescriptor.DependsOn(m, b.k.owner(ok))
		d.needs = appendNew(d.needs, b.k.owner(ok))
		// The owner's marker lives only in the scheduler: after a
		// restart, what an object read back names in its annotation
		// is all that orders its delete, so it names the other
		// owner's objects too, deleted after it.
		kubedescriptor.OrderedAfter(m, objectsOf(ok)...)
	}
	for _, ok := range o.available {
		kubedescriptor.DependsOn(m, b.k.available(ok))
		d.needs = appendNew(d.needs, b.k.available(ok))
		kubedescriptor.OrderedAfter(m, objectsOf(ok)...)
	}
	return nil
}

// prepare copies obj, puts it in the owner's namespace (objects of
// namespaced kinds; cluster-scoped ones have none) and names the owner
// in AnnotationOwner.
func (b *builder[T]) prepare(owner T, obj runtime.Object) (metav1.Object, string, string, error) {
	gvk, err := b.gvk(obj)
	if err != nil {
		return nil, "", "", err
	}
	if !b.kinds[gvk.GroupKind()] {
		return nil, "", "", fmt.Errorf("%s is not one of the registration's kinds (Options.Kinds)", gvk.Kind)
	}
	c := obj.DeepCopyObject()
	c.GetObjectKind().SetGroupVersionKind(gvk)
	m, err := meta.Accessor(c)
	if err != nil {
		return nil, "", "", err
	}
	label := gvk.Kind + " " + m.GetName()
	if m.GetName() == "" {
		return nil, "", "", fmt.Errorf("a %s has no name", gvk.Kind)
	}
	namespaced, err := b.namespaced(gvk)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", label, err)
	}
	if err := b.place(owner, m, namespaced, label); err != nil {
		return nil, "", "", err
	}
	// No owner reference: the garbage collector would delete the objects
	// in any order when the owner goes; the scheduler deletes them, in
	// reverse order (and its first resync after a restart deletes those of
	// owners deleted meanwhile). The annotation names the owner for people.
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationOwner] = fmt.Sprintf("%s %s %s", b.ownerGVK.Kind, ownerKey(owner.GetNamespace(), owner.GetName()), owner.GetUID())
	m.SetAnnotations(a)
	return m, kubedescriptor.KeyFor(gvk, m.GetNamespace(), m.GetName()), label, nil
}

// place puts m, of a namespaced kind or not, in its namespace: a
// namespaced object goes in its owner's namespace, or, for a
// cluster-scoped owner, in the one it names (there is no owner's
// namespace); in Options.Namespace when it is set, since the scheduler
// reads nothing outside it and could never delete the object.
func (b *builder[T]) place(owner T, m metav1.Object, namespaced bool, label string) error {
	ns, ownerNS := m.GetNamespace(), owner.GetNamespace()
	switch {
	case !namespaced && ns != "":
		return fmt.Errorf("%s is cluster-scoped and cannot be in namespace %q", label, ns)
	case !namespaced:
		return nil
	case ns == "" && ownerNS == "":
		return fmt.Errorf("%s is namespaced and its owner is cluster-scoped: the handler must set its namespace", label)
	case ns == "":
		m.SetNamespace(ownerNS)
	case ownerNS != "" && ns != ownerNS:
		return fmt.Errorf("%s is in namespace %q, not its owner's", label, ns)
	}
	if b.namespace != "" && m.GetNamespace() != b.namespace {
		return fmt.Errorf("%s is in namespace %q, outside Options.Namespace %q: it could not be read back", label, m.GetNamespace(), b.namespace)
	}
	return nil
}

// appendNew appends s to l unless l has it.
func appendNew(l []string, s string) []string {
	if slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}

// isNilPointer tells whether obj is a typed nil (Of((*corev1.ConfigMap)(nil)),
// a lookup that found nothing passed on unchecked): not nil as an
// interface, and every method of it would panic.
func isNilPointer(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
