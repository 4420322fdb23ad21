package cache

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/client"
)

// metaLister lists and watches a MetadataOnly kind through client-go's
// metadata client, built over the configuration of the kind's client: the
// same connections, credentials and timeouts, and the resource the
// client resolved (so a CRD installed or removed later is found as it is
// for any other kind).
type metaLister struct {
	gvk schema.GroupVersionKind

	mu   sync.Mutex
	from *client.Client // the client meta was built from
	meta metadata.Interface
}

// resource returns the metadata client of c's resource in namespace.
func (m *metaLister) resource(c *client.Client, namespace string) (metadata.ResourceInterface, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.from != c {
		mc, err := metadata.NewForConfig(c.RESTConfig())
		if err != nil {
			return nil, &clientError{fmt.Errorf("metadata client for %s: %w", KindLabel(m.gvk), err)}
		}
		m.from, m.meta = c, mc
	}
	r := m.meta.Resource(c.GroupVersionResource())
	if c.Namespaced() && namespace != "" {
		return r.Namespace(namespace), nil
	}
	return r, nil
}

// stamp sets the kind's apiVersion and kind on a metadata object, which
// the API server sends as meta.k8s.io/v1 PartialObjectMetadata: readers
// of the cache (owner lookups, pkg/apply) tell kinds apart by them.
func (m *metaLister) stamp(obj any) (any, error) {
	if p, ok := obj.(*metav1.PartialObjectMetadata); ok && p.GroupVersionKind() != m.gvk {
		p.SetGroupVersionKind(m.gvk)
	}
	return obj, nil
}

// stamping returns next after stamp when m is set (a MetadataOnly kind),
// next alone otherwise.
func (m *metaLister) stamping(next cache.TransformFunc) cache.TransformFunc {
	if m == nil {
		return next
	}
	if next == nil {
		return m.stamp
	}
	return func(obj any) (any, error) {
		obj, err := m.stamp(obj)
		if err != nil {
			return nil, err
		}
		return next(obj)
	}
}

// list reads the objects the informer lists into result: whole objects
// through c, or their metadata when the kind is MetadataOnly.
func (o Options) list(ctx context.Context, c *client.Client, result runtime.Object, lo metav1.ListOptions) error {
	if o.meta == nil {
		return c.List(ctx, o.Namespace, result, lo)
	}
	r, err := o.meta.resource(c, o.Namespace)
	if err != nil {
		return err
	}
	l, err := r.List(ctx, lo)
	if err != nil {
		return err
	}
	out, ok := result.(*metav1.PartialObjectMetadataList)
	if !ok {
		return fmt.Errorf("cache: a metadata-only list of %s into a %T", KindLabel(o.meta.gvk), result)
	}
	*out = *l
	return nil
}

// watch watches what the informer lists: whole objects through c, or
// their metadata when the kind is MetadataOnly.
func (o Options) watch(ctx context.Context, c *client.Client, lo metav1.ListOptions) (watch.Interface, error) {
	if o.meta == nil {
		return c.Watch(ctx, o.Namespace, lo)
	}
	r, err := o.meta.resource(c, o.Namespace)
	if err != nil {
		return nil, err
	}
	return r.Watch(ctx, lo)
}
