// Package client is Lariat's REST client for one Kubernetes resource and the
// SharedClientFactory that creates those clients lazily, one per resource,
// mapping kinds to resources through a discovery REST mapper that refreshes
// when it misses, so CRDs installed after start are found, and that
// Rediscover refreshes when a request finds a mapped resource gone (a deleted
// CRD); refreshes are rate limited per kind.
//
// client-go's typed clientsets need a generated package per group and its
// dynamic client returns only unstructured objects; this client serves any
// kind, typed when the kind is in the scheme and unstructured otherwise, with
// the request timeouts, user agents and impersonation operators need.
package client

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// DefaultTimeout bounds every request but Watch when a factory is given none.
const DefaultTimeout = 30 * time.Second

// Client reads and writes one resource (group, version, resource) of one
// kind. Results carry their apiVersion and kind. Every call but Watch is
// bounded by the client's timeout unless ctx ends first.
type Client struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
	rest       rest.Interface
	config     *rest.Config // to derive clients with another agent or identity
	timeout    time.Duration
}

// newClient builds a client over restClient; config is kept so WithAgent and
// WithImpersonation can build a sibling with other credentials.
func newClient(gvr schema.GroupVersionResource, kind string, namespaced bool, restClient rest.Interface, config *rest.Config, timeout time.Duration) *Client {
	return &Client{
		gvr:        gvr,
		gvk:        gvr.GroupVersion().WithKind(kind),
		namespaced: namespaced,
		rest:       restClient,
		config:     config,
		timeout:    timeout,
	}
}

// GroupVersionResource returns the resource this client serves.
func (c *Client) GroupVersionResource() schema.GroupVersionResource { return c.gvr }

// GroupVersionKind returns the kind this client serves.
func (c *Client) GroupVersionKind() schema.GroupVersionKind { return c.gvk }

// Namespaced reports whether the resource lives in namespaces.
func (c *Client) Namespaced() bool { return c.namespaced }

// RESTClient returns the REST client the client sends its requests with,
// configured for its kind's wire format, so that adapters (the lasso
// compatibility layer) can build other clients over the same connections.
func (c *Client) RESTClient() rest.Interface { return c.rest }

// RESTConfig returns a copy of the configuration the client was built from
// (its kind's serializer and content types included).
func (c *Client) RESTConfig() *rest.Config { return rest.CopyConfig(c.config) }

// Timeout returns the bound of each request but watches; zero means none.
func (c *Client) Timeout() time.Duration { return c.timeout }

// WithAgent returns a client for the same resource that sends userAgent as
// its User-Agent header, so API server audit logs tell controllers apart.
func (c *Client) WithAgent(userAgent string) (*Client, error) {
	cfg := rest.CopyConfig(c.config)
	cfg.UserAgent = userAgent
	return c.derive(cfg)
}

// WithImpersonation returns a client for the same resource that acts as the
// given user, for controllers that act on behalf of someone.
func (c *Client) WithImpersonation(impersonate rest.ImpersonationConfig) (*Client, error) {
	cfg := rest.CopyConfig(c.config)
	cfg.Impersonate = impersonate
	return c.derive(cfg)
}

// WithDecoder returns a client for the same resource, over the same
// connections, whose responses and watch events are decoded by the decoder
// wrap returns for the client's own. A cache that keeps objects in a form of
// its own (the compact cache) reads them from the wire bytes this way, where
// client-go would decode each object whole before handing it over.
func (c *Client) WithDecoder(wrap func(runtime.Decoder) runtime.Decoder) (*Client, error) {
	cfg := rest.CopyConfig(c.config)
	if cfg.NegotiatedSerializer == nil {
		return nil, fmt.Errorf("client for %s: no serializer to wrap", c.gvr)
	}
	cfg.NegotiatedSerializer = decodingSerializer{NegotiatedSerializer: cfg.NegotiatedSerializer, wrap: wrap}
	rc, ok := c.rest.(*rest.RESTClient)
	if !ok || rc.Client == nil {
		return c.derive(cfg)
	}
	// The same HTTP client: a second one would open connections of its own.
	restClient, err := rest.RESTClientForConfigAndClient(cfg, rc.Client)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", c.gvr, err)
	}
	return newClient(c.gvr, c.gvk.Kind, c.namespaced, restClient, cfg, c.timeout), nil
}

func (c *Client) derive(cfg *rest.Config) (*Client, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", c.gvr, err)
	}
	restClient, err := rest.RESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", c.gvr, err)
	}
	return newClient(c.gvr, c.gvk.Kind, c.namespaced, restClient, cfg, c.timeout), nil
}

// request starts a request with the client's timeout; see watchRequest for
// the one without.
func (c *Client) request(verb, namespace string) *rest.Request {
	r := c.watchRequest(verb, namespace)
	if c.timeout > 0 {
		r = r.Timeout(c.timeout)
	}
	return r
}

func (c *Client) watchRequest(verb, namespace string) *rest.Request {
	r := c.rest.Verb(verb).Resource(c.gvr.Resource)
	if c.namespaced {
		r = r.Namespace(namespace)
	}
	return r
}

// Get reads one object into result.
func (c *Client) Get(ctx context.Context, namespace, name string, result runtime.Object, opts metav1.GetOptions) error {
	err := c.request(http.MethodGet, namespace).Name(name).
		VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(result)
	return c.typed(result, err)
}

// List reads the objects of namespace ("" for all) into result, a list.
func (c *Client) List(ctx context.Context, namespace string, result runtime.Object, opts metav1.ListOptions) error {
	err := c.request(http.MethodGet, namespace).
		VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(result)
	if err != nil {
		return err
	}
	result.GetObjectKind().SetGroupVersionKind(c.gvk.GroupVersion().WithKind(c.gvk.Kind + "List"))
	return meta.EachListItem(result, func(item runtime.Object) error {
		item.GetObjectKind().SetGroupVersionKind(c.gvk)
		return nil
	})
}

// Watch streams changes to the objects of namespace ("" for all). It has no
// timeout of its own: it lasts until ctx ends, the server closes it, or
// opts.TimeoutSeconds passes. Objects arrive with apiVersion and kind.
func (c *Client) Watch(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	w, err := c.watchRequest(http.MethodGet, namespace).
		VersionedParams(&opts, metav1.ParameterCodec).Watch(ctx)
	if err != nil {
		return nil, err
	}
	return newKindWatch(ctx, w, c.gvk), nil
}

// kindWatch stamps a kind on each event's object. Unlike watch.Filter, whose
// goroutine blocks forever on an event nobody reads, its goroutine ends when
// the watch is stopped or its context ends, whether or not anyone reads.
type kindWatch struct {
	in   watch.Interface
	gvk  schema.GroupVersionKind
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func newKindWatch(ctx context.Context, in watch.Interface, gvk schema.GroupVersionKind) *kindWatch {
	w := &kindWatch{in: in, gvk: gvk, out: make(chan watch.Event), stop: make(chan struct{})}
	go w.loop(ctx)
	return w
}

func (w *kindWatch) loop(ctx context.Context) {
	defer close(w.out)
	defer w.in.Stop()
	for {
		var e watch.Event
		var ok bool
		select {
		case e, ok = <-w.in.ResultChan():
			if !ok {
				return
			}
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
		if e.Type != watch.Error && e.Object != nil {
			e.Object.GetObjectKind().SetGroupVersionKind(w.gvk)
		}
		select {
		case w.out <- e:
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// ResultChan returns the events, closed when the watch ends.
func (w *kindWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop ends the watch and its goroutine; it may be called more than once.
func (w *kindWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.in.Stop()
	})
}

// Create creates obj in namespace and reads the stored object into result.
func (c *Client) Create(ctx context.Context, namespace string, obj, result runtime.Object, opts metav1.CreateOptions) error {
	err := c.request(http.MethodPost, namespace).
		VersionedParams(&opts, metav1.ParameterCodec).Body(obj).Do(ctx).Into(result)
	return c.typed(result, err)
}

// Update replaces obj (optimistically, by its resourceVersion) and reads the
// stored object into result.
func (c *Client) Update(ctx context.Context, namespace string, obj, result runtime.Object, opts metav1.UpdateOptions) error {
	return c.update(ctx, namespace, obj, result, opts, "")
}

// UpdateStatus replaces obj's status subresource and reads the stored object
// into result.
func (c *Client) UpdateStatus(ctx context.Context, namespace string, obj, result runtime.Object, opts metav1.UpdateOptions) error {
	return c.update(ctx, namespace, obj, result, opts, "status")
}

func (c *Client) update(ctx context.Context, namespace string, obj, result runtime.Object, opts metav1.UpdateOptions, subresource string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("update %s: %w", c.gvk.Kind, err)
	}
	r := c.request(http.MethodPut, namespace).Name(m.GetName())
	if subresource != "" {
		r = r.SubResource(subresource)
	}
	err = r.VersionedParams(&opts, metav1.ParameterCodec).Body(obj).Do(ctx).Into(result)
	return c.typed(result, err)
}

// Patch applies a patch of type pt to the named object, or to one of its
// subresources, and reads the result into result.
func (c *Client) Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, result runtime.Object, opts metav1.PatchOptions, subresources ...string) error {
	err := c.request(http.MethodPatch, namespace).Name(name).SubResource(subresources...).
		VersionedParams(&opts, metav1.ParameterCodec).Body(data).SetHeader("Content-Type", string(pt)).
		Do(ctx).Into(result)
	return c.typed(result, err)
}

// Delete deletes the named object.
func (c *Client) Delete(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	return c.request(http.MethodDelete, namespace).Name(name).Body(&opts).Do(ctx).Error()
}

// DeleteCollection deletes the objects of namespace selected by listOpts.
func (c *Client) DeleteCollection(ctx context.Context, namespace string, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	return c.request(http.MethodDelete, namespace).
		VersionedParams(&listOpts, metav1.ParameterCodec).Body(&opts).Do(ctx).Error()
}

// typed stamps the client's kind on a successfully read object: typed
// decoding leaves apiVersion and kind empty, which breaks code that logs or
// routes objects by kind.
func (c *Client) typed(result runtime.Object, err error) error {
	if err == nil && result != nil {
		result.GetObjectKind().SetGroupVersionKind(c.gvk)
	}
	return err
}
