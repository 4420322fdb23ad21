package kubedescriptor

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// The values a descriptor takes: their dependencies (AnnotationDependsOn)
// and what Validate checks without a request.

// DependsOn adds keys to obj's AnnotationDependsOn annotation, keeping the
// ones already listed, and returns obj for chaining.
func DependsOn[T metav1.Object](obj T, keys ...string) T {
	addKeys(obj, AnnotationDependsOn, keys)
	return obj
}

// OrderedAfter adds keys to obj's AnnotationOrderedAfter annotation,
// keeping the ones already listed, and returns obj for chaining: obj is
// created after them, and stays when they go (kvscheduler.OrderingOnly).
func OrderedAfter[T metav1.Object](obj T, keys ...string) T {
	addKeys(obj, AnnotationOrderedAfter, keys)
	return obj
}

func addKeys(obj metav1.Object, annotation string, keys []string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	have := splitKeys(a[annotation])
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" && !contains(have, k) {
			have = append(have, k)
		}
	}
	a[annotation] = strings.Join(have, ",")
	obj.SetAnnotations(a)
}

// dependencies reads the annotation; the key itself is the label, so a
// PENDING status names the missing object's key.
func dependencies(value any) []kvscheduler.Dependency {
	if isNil(value) {
		return nil
	}
	m, err := meta.Accessor(value)
	if err != nil {
		return nil
	}
	var out []kvscheduler.Dependency
	for _, k := range splitKeys(m.GetAnnotations()[AnnotationDependsOn]) {
		out = append(out, kvscheduler.Dependency{Key: k})
	}
	for _, k := range splitKeys(m.GetAnnotations()[AnnotationOrderedAfter]) {
		out = append(out, kvscheduler.Dependency{Key: k, Kind: kvscheduler.OrderingOnly})
	}
	return out
}

// validate only checks what needs no request, because a failed request
// would make the value INVALID instead of retried; the scope is checked
// when the object is applied.
func (k *kind) validate(key string, value any) error {
	obj, ok := value.(runtime.Object)
	if !ok || isNil(value) {
		return kvscheduler.NewInvalidValueError(fmt.Errorf("value of %s is %T, not a runtime.Object", key, value))
	}
	gvk, err := k.opts.Clients.GVKForObject(obj)
	if err != nil {
		return kvscheduler.NewInvalidValueError(err, "apiVersion", "kind")
	}
	if gvk.GroupKind() != k.gvk.GroupKind() {
		return kvscheduler.NewInvalidValueError(fmt.Errorf("value of %s is a %s, want %s", key, gvk.GroupKind(), k.gvk.GroupKind()), "apiVersion", "kind")
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return kvscheduler.NewInvalidValueError(err)
	}
	if m.GetName() == "" {
		return kvscheduler.NewInvalidValueError(errors.New("the object has no name"), "metadata.name")
	}
	if want := KeyFor(gvk, m.GetNamespace(), m.GetName()); want != key {
		return kvscheduler.NewInvalidValueError(fmt.Errorf("the object's key is %s, not %s", want, key), "metadata.name", "metadata.namespace")
	}
	// Dependency keys are not checked against ParseKey: an object may
	// depend on values of other descriptors (an operator's own markers,
	// say), and a mistyped key shows up as an unmet dependency.
	return nil
}

// DependsOnKeys returns the keys obj's lariat.dev/depends-on annotation
// names (see DependsOn), trimmed, empty ones left out.
func DependsOnKeys(obj metav1.Object) []string {
	return splitKeys(obj.GetAnnotations()[AnnotationDependsOn])
}

func splitKeys(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isNil catches typed nil pointers, whose accessors would panic.
func isNil(v any) bool {
	r := reflect.ValueOf(v)
	return !r.IsValid() || r.Kind() == reflect.Pointer && r.IsNil()
}
