package kubedescriptor

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

const (
	// CoreGroup stands for the core API group (whose name is empty) in keys.
	CoreGroup = "core"
	// NoNamespace stands for the namespace of cluster-scoped objects in keys.
	NoNamespace = "_"
)

// ObjectRef is a parsed key: which object of which kind, without version.
type ObjectRef struct {
	// Group is the API group; empty for the core group.
	Group string
	// Kind is the object's kind, such as "ConfigMap".
	Kind string
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name is the object's name.
	Name string
}

// GroupKind returns the reference's group and kind.
func (r ObjectRef) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: r.Group, Kind: r.Kind}
}

// String returns the reference's key.
func (r ObjectRef) String() string {
	return KeyFor(schema.GroupVersionKind{Group: r.Group, Kind: r.Kind}, r.Namespace, r.Name)
}

// KeyPrefix returns the prefix shared by the keys of all objects of a kind,
// "<group>/<kind>/". The trailing slash keeps kinds that are prefixes of
// others (Service, ServiceAccount) apart.
func KeyPrefix(gk schema.GroupKind) string {
	group := gk.Group
	if group == "" {
		group = CoreGroup
	}
	return group + "/" + gk.Kind + "/"
}

// KeyFor returns the key of the object of kind gvk (the version is ignored)
// with the given namespace ("" for cluster-scoped objects) and name.
func KeyFor(gvk schema.GroupVersionKind, namespace, name string) string {
	if namespace == "" {
		namespace = NoNamespace
	}
	return KeyPrefix(gvk.GroupKind()) + namespace + "/" + name
}

// Key returns obj's key. The kind comes from obj's apiVersion and kind when
// set, and otherwise from client-go's scheme, which knows the built-in
// types; use KeyFor for typed objects of other schemes.
func Key(obj runtime.Object) (string, error) {
	gvk, err := objectKind(obj)
	if err != nil {
		return "", err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("kubedescriptor: %w", err)
	}
	if m.GetName() == "" {
		return "", fmt.Errorf("kubedescriptor: %s has no name", gvk.Kind)
	}
	return KeyFor(gvk, m.GetNamespace(), m.GetName()), nil
}

// objectKind reads the kind set on obj or looks it up in client-go's
// scheme, because typed objects usually come with an empty TypeMeta.
func objectKind(obj runtime.Object) (schema.GroupVersionKind, error) {
	if obj == nil {
		return schema.GroupVersionKind{}, errors.New("kubedescriptor: nil object")
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk, nil
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("kubedescriptor: %w", err)
	}
	return gvks[0], nil
}

// ParseKey reads a key built by KeyFor.
func ParseKey(key string) (ObjectRef, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0] == "" || parts[1] == "" || parts[2] == "" || parts[3] == "" {
		return ObjectRef{}, fmt.Errorf("kubedescriptor: key %q is not <group>/<kind>/<namespace>/<name>", key)
	}
	r := ObjectRef{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}
	if r.Group == CoreGroup {
		r.Group = ""
	}
	if r.Namespace == NoNamespace {
		r.Namespace = ""
	}
	return r, nil
}
