// Package generic is the typed layer over Lariat's clients, caches and
// controllers. Controller, Client and Cache are parameterized by the Go type
// of a kind (for example *corev1.ConfigMap and *corev1.ConfigMapList), so
// handlers, cache reads and API requests need no type assertions, and the
// per-kind code a generator writes reduces to interfaces over these types.
//
// The names follow wrangler's generic package so that generated code and
// operators ported from wrangler read the same. Three things differ: every
// API request takes a context, constructors return errors instead of
// panicking, and one Factory (one client, cache and controller factory) is
// shared by every API group instead of one per group, so an operator that
// uses several groups opens one connection pool and one informer per kind.
//
// OnRemove keeps a finalizer on every object of the kind until its handler
// has run for the object's deletion; the finalizer is added and removed with
// JSON patches guarded by test operations, so concurrent writers neither
// conflict with it nor lose their changes.
package generic

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// RuntimeMetaObject is the constraint on the object types of this package:
// API objects with metadata, comparable so that a handler's zero (nil)
// result can be told apart. In practice it is a pointer to a generated type
// such as *corev1.ConfigMap, or *unstructured.Unstructured.
type RuntimeMetaObject interface {
	comparable
	runtime.Object
	metav1.Object
}

// ObjectHandler handles the object stored under a key ("namespace/name", or
// "name" for cluster-scoped kinds). obj is the zero T (nil) when the object
// was deleted. It returns the object as it left it, which the next handler
// of the kind receives; the zero T passes obj on unchanged. obj comes from
// the cache and must not be modified: DeepCopy it first.
type ObjectHandler[T runtime.Object] func(key string, obj T) (T, error)

// Indexer computes the values an object is indexed under in a named cache
// index.
type Indexer[T runtime.Object] func(obj T) ([]string, error)

// Updater writes a whole object back to the API server and returns what was
// stored; generated status and generating handlers use it to save objects
// whose Go type they do not know.
type Updater func(ctx context.Context, obj runtime.Object) (runtime.Object, error)

// FromObjectHandlerToHandler adapts a typed handler to the untyped handlers
// of a controller.SharedController. An object of another type than T is
// reported as an error, never a panic.
func FromObjectHandlerToHandler[T RuntimeMetaObject](sync ObjectHandler[T]) controller.SharedHandlerFunc {
	return func(key string, obj runtime.Object) (runtime.Object, error) {
		var zero T
		in := zero
		if obj != nil && !isNilPointer(obj) {
			typed, ok := obj.(T)
			if !ok {
				return nil, fmt.Errorf("handler for %s expects %T, got %T", key, zero, obj)
			}
			in = typed
		}
		out, err := sync(key, in)
		if out == zero {
			// A typed nil in a runtime.Object is not nil; the shared
			// controller would pass it on as an object.
			return nil, err
		}
		return out, err
	}
}

// isNilPointer catches a typed nil pointer held in an interface.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return !rv.IsValid() || (rv.Kind() == reflect.Pointer && rv.IsNil())
}

// kindTypes checks that clients decode gvk into T and its lists into TList,
// so that every type assertion this package makes on cached and decoded
// objects holds, and returns the types T and TList point to.
func kindTypes[T RuntimeMetaObject, TList runtime.Object](clients *client.SharedClientFactory, gvk schema.GroupVersionKind) (obj, list reflect.Type, err error) {
	objPtr, listPtr := reflect.TypeFor[T](), reflect.TypeFor[TList]()
	if objPtr.Kind() != reflect.Pointer {
		return nil, nil, fmt.Errorf("object type %s of %s is not a pointer type", objPtr, gvk)
	}
	if listPtr.Kind() != reflect.Pointer {
		return nil, nil, fmt.Errorf("list type %s of %s is not a pointer type", listPtr, gvk)
	}
	newObj, newList, err := clients.NewObjects(gvk)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", gvk, err)
	}
	if got := reflect.TypeOf(newObj); got != objPtr {
		hint := "use the Go type the scheme registers for the kind"
		if _, isUnstructured := newObj.(*unstructured.Unstructured); isUnstructured {
			hint = "add the kind's types to the factory's scheme"
		}
		return nil, nil, fmt.Errorf("the factory decodes %s into %s, not %s: %s", gvk, got, objPtr, hint)
	}
	if got := reflect.TypeOf(newList); got != listPtr {
		return nil, nil, fmt.Errorf("the factory decodes lists of %s into %s, not %s", gvk, got, listPtr)
	}
	return objPtr.Elem(), listPtr.Elem(), nil
}

// checkKind validates the arguments every constructor takes.
func checkKind(gvk schema.GroupVersionKind, resource string) error {
	if gvk.Version == "" || gvk.Kind == "" {
		return fmt.Errorf("kind %q has no version or kind", gvk)
	}
	if resource == "" {
		return fmt.Errorf("kind %s: resource is empty", gvk)
	}
	return nil
}
