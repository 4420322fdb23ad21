package generic

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
)

// ApplyConfiguration is a server-side apply configuration, such as those
// client-go generates (k8s.io/client-go/applyconfigurations/...): a value
// that encoding/json marshals into a partial object with apiVersion, kind
// and metadata.name (and metadata.namespace for namespaced kinds).
type ApplyConfiguration interface {
	// GetName returns the configured metadata.name, nil when unset.
	GetName() *string
	// GetNamespace returns the configured metadata.namespace, nil when
	// unset.
	GetNamespace() *string
}

// Client is a typed client of one kind. Results carry apiVersion and kind.
// It satisfies ClientInterface; NonNamespacedClient wraps it for
// cluster-scoped kinds.
type Client[T RuntimeMetaObject, TList runtime.Object] struct {
	client   *client.Client
	gvk      schema.GroupVersionKind
	objType  reflect.Type // what T points to
	listType reflect.Type // what TList points to
}

// NewClient returns the typed client of a kind whose resource and scope the
// caller knows (no discovery is needed). It fails when clients would not
// decode the kind into T and TList: both must be pointer types, registered
// for the kind in the factory's scheme, or *unstructured.Unstructured and
// *unstructured.UnstructuredList for a kind that is not in it.
func NewClient[T RuntimeMetaObject, TList runtime.Object](gvk schema.GroupVersionKind, resource string, namespaced bool, clients *client.SharedClientFactory) (*Client[T, TList], error) {
	if clients == nil {
		return nil, fmt.Errorf("client for %s: no client factory", gvk)
	}
	if err := checkKind(gvk, resource); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	objType, listType, err := kindTypes[T, TList](clients, gvk)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	c, err := clients.ForResourceKind(gvk.GroupVersion().WithResource(resource), gvk.Kind, namespaced)
	if err != nil {
		return nil, err
	}
	return &Client[T, TList]{client: c, gvk: gvk, objType: objType, listType: listType}, nil
}

func (c *Client[T, TList]) newObject() T {
	obj, _ := reflect.New(c.objType).Interface().(T) // kindTypes made it a T
	return obj
}

func (c *Client[T, TList]) newList() TList {
	list, _ := reflect.New(c.listType).Interface().(TList)
	return list
}

// namespaceOf returns the namespace obj is written to, refusing a namespaced
// object without one: the request would otherwise go to the all-namespaces
// path and fail with a confusing "method not allowed".
func (c *Client[T, TList]) namespaceOf(verb string, obj T) (string, error) {
	var zero T
	if obj == zero {
		return "", fmt.Errorf("%s %s: object is nil", verb, c.gvk.Kind)
	}
	if !c.client.Namespaced() {
		return "", nil
	}
	if obj.GetNamespace() == "" {
		return "", fmt.Errorf("%s %s %q: namespace is empty", verb, c.gvk.Kind, obj.GetName())
	}
	return obj.GetNamespace(), nil
}

// Create creates obj in its namespace and returns the stored object.
func (c *Client[T, TList]) Create(ctx context.Context, obj T) (T, error) {
	var zero T
	ns, err := c.namespaceOf("create", obj)
	if err != nil {
		return zero, err
	}
	result := c.newObject()
	if err := c.client.Create(ctx, ns, obj, result, metav1.CreateOptions{}); err != nil {
		return zero, err
	}
	return result, nil
}

// Update replaces obj, guarded by its resourceVersion, and returns the
// stored object.
func (c *Client[T, TList]) Update(ctx context.Context, obj T) (T, error) {
	var zero T
	ns, err := c.namespaceOf("update", obj)
	if err != nil {
		return zero, err
	}
	result := c.newObject()
	if err := c.client.Update(ctx, ns, obj, result, metav1.UpdateOptions{}); err != nil {
		return zero, err
	}
	return result, nil
}

// UpdateStatus replaces obj's status subresource and returns the stored
// object.
func (c *Client[T, TList]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	var zero T
	ns, err := c.namespaceOf("update status of", obj)
	if err != nil {
		return zero, err
	}
	result := c.newObject()
	if err := c.client.UpdateStatus(ctx, ns, obj, result, metav1.UpdateOptions{}); err != nil {
		return zero, err
	}
	return result, nil
}

// Delete deletes the named object.
func (c *Client[T, TList]) Delete(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	return c.client.Delete(ctx, namespace, name, opts)
}

// Get reads the named object from the API server.
func (c *Client[T, TList]) Get(ctx context.Context, namespace, name string, opts metav1.GetOptions) (T, error) {
	var zero T
	result := c.newObject()
	if err := c.client.Get(ctx, namespace, name, result, opts); err != nil {
		return zero, err
	}
	return result, nil
}

// List reads the objects of namespace ("" for all) from the API server.
func (c *Client[T, TList]) List(ctx context.Context, namespace string, opts metav1.ListOptions) (TList, error) {
	var zero TList
	result := c.newList()
	if err := c.client.List(ctx, namespace, result, opts); err != nil {
		return zero, err
	}
	return result, nil
}

// Watch streams changes to the objects of namespace ("" for all) until ctx
// ends or the server closes the stream.
func (c *Client[T, TList]) Watch(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return c.client.Watch(ctx, namespace, opts)
}

// Patch applies a patch of type pt to the named object, or to one of its
// subresources, and returns the result.
func (c *Client[T, TList]) Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, subresources ...string) (T, error) {
	var zero T
	result := c.newObject()
	if err := c.client.Patch(ctx, namespace, name, pt, data, result, metav1.PatchOptions{}, subresources...); err != nil {
		return zero, err
	}
	return result, nil
}

// Apply sends config as a server-side apply patch and returns the result.
// opts.FieldManager is required: it names the owner of the applied fields,
// and the API server has no sensible default for it. opts.Force takes over
// fields other managers own.
func (c *Client[T, TList]) Apply(ctx context.Context, config ApplyConfiguration, opts metav1.ApplyOptions) (T, error) {
	var zero T
	if config == nil || isNilPointer(config) {
		return zero, fmt.Errorf("apply %s: configuration is nil", c.gvk.Kind)
	}
	if opts.FieldManager == "" {
		return zero, fmt.Errorf("apply %s: opts.FieldManager is required", c.gvk.Kind)
	}
	name := config.GetName()
	if name == nil || *name == "" {
		return zero, fmt.Errorf("apply %s: configuration has no name", c.gvk.Kind)
	}
	namespace := ""
	if c.client.Namespaced() {
		if ns := config.GetNamespace(); ns != nil {
			namespace = *ns
		}
		if namespace == "" {
			return zero, fmt.Errorf("apply %s %q: configuration has no namespace", c.gvk.Kind, *name)
		}
	}
	data, err := json.Marshal(config)
	if err != nil {
		return zero, fmt.Errorf("apply %s %q: %w", c.gvk.Kind, *name, err)
	}
	result := c.newObject()
	if err := c.client.Patch(ctx, namespace, *name, types.ApplyPatchType, data, result, opts.ToPatchOptions()); err != nil {
		return zero, err
	}
	return result, nil
}

// WithImpersonation returns a client of the same kind that acts as the given
// user, for controllers that act on someone's behalf.
func (c *Client[T, TList]) WithImpersonation(impersonate rest.ImpersonationConfig) (ClientInterface[T, TList], error) {
	return c.withImpersonation(impersonate)
}

func (c *Client[T, TList]) withImpersonation(impersonate rest.ImpersonationConfig) (*Client[T, TList], error) {
	derived, err := c.client.WithImpersonation(impersonate)
	if err != nil {
		return nil, err
	}
	return &Client[T, TList]{client: derived, gvk: c.gvk, objType: c.objType, listType: c.listType}, nil
}
