package lasso

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	lassoclient "github.com/rancher/lasso/pkg/client"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
)

// NewClient returns lasso's client for the resource c serves, over the
// same HTTP connection pool, rate limiter, wire format (protobuf for
// built-in kinds) and timeout as c. lasso's client builds its paths itself
// (/apis/<group>/<version>/...), so it is given an unversioned REST client
// made from c's configuration, as lasso's own factory makes one; its Config
// is that configuration, so lasso's WithAgent and WithImpersonation derive
// clients with the same serializer.
func NewClient(c *client.Client) (*lassoclient.Client, error) {
	cfg := c.RESTConfig()
	cfg.APIPath = ""
	cfg.GroupVersion = nil
	httpClient, err := httpClientOf(c, cfg)
	if err != nil {
		return nil, err
	}
	restClient, err := rest.UnversionedRESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("lasso client for %s: %w", c.GroupVersionResource(), err)
	}
	lc := lassoclient.NewClient(c.GroupVersionResource(), c.GroupVersionKind().Kind, c.Namespaced(), restClient, c.Timeout())
	lc.Config = *cfg
	return lc, nil
}

// httpClientOf returns the HTTP client c sends with, so that lasso's client
// shares its connections; a REST client of another type (none that Lariat
// makes) gets one of its own.
func httpClientOf(c *client.Client, cfg *rest.Config) (*http.Client, error) {
	if rc, ok := c.RESTClient().(*rest.RESTClient); ok && rc.Client != nil {
		return rc.Client, nil
	}
	return rest.HTTPClientFor(cfg)
}

// SharedClientFactory is Lariat's client factory seen through lasso's
// client.SharedClientFactory interface. It is safe for concurrent use.
type SharedClientFactory struct {
	clients *client.SharedClientFactory

	mu sync.Mutex
	// lasso keeps the lasso client of each Lariat client, so that a
	// resource's client is one value, as lasso's own factory makes it.
	lasso map[*client.Client]*lassoclient.Client
}

var _ lassoclient.SharedClientFactory = (*SharedClientFactory)(nil)

// NewSharedClientFactory wraps clients.
func NewSharedClientFactory(clients *client.SharedClientFactory) *SharedClientFactory {
	return &SharedClientFactory{clients: clients, lasso: map[*client.Client]*lassoclient.Client{}}
}

// Lariat returns the wrapped factory.
func (f *SharedClientFactory) Lariat() *client.SharedClientFactory { return f.clients }

func (f *SharedClientFactory) wrap(c *client.Client, err error) (*lassoclient.Client, error) {
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	lc, ok := f.lasso[c]
	if !ok {
		var err error
		if lc, err = NewClient(c); err != nil {
			return nil, err
		}
		f.lasso[c] = lc
	}
	return lc, nil
}

// ForKind returns the client of a kind, looking up its resource.
func (f *SharedClientFactory) ForKind(gvk schema.GroupVersionKind) (*lassoclient.Client, error) {
	return f.wrap(f.clients.ForKind(gvk))
}

// ForResource returns the client of a resource, looking up its kind.
func (f *SharedClientFactory) ForResource(gvr schema.GroupVersionResource, namespaced bool) (*lassoclient.Client, error) {
	return f.wrap(f.clients.ForResource(gvr, namespaced))
}

// ForResourceKind returns the client of a resource whose kind and scope the
// caller knows. lasso's signature has no error: Lariat's fails only when the
// REST configuration cannot make a client (which NewSharedClientFactory
// has already checked), and then nil is returned; ForResourceKindErr
// returns the error.
func (f *SharedClientFactory) ForResourceKind(gvr schema.GroupVersionResource, kind string, namespaced bool) *lassoclient.Client {
	lc, _ := f.ForResourceKindErr(gvr, kind, namespaced)
	return lc
}

// ForResourceKindErr is ForResourceKind with its error. An empty kind is
// looked up, as lasso does.
func (f *SharedClientFactory) ForResourceKindErr(gvr schema.GroupVersionResource, kind string, namespaced bool) (*lassoclient.Client, error) {
	if kind == "" {
		return f.wrap(f.clients.ForResource(gvr, namespaced))
	}
	return f.wrap(f.clients.ForResourceKind(gvr, kind, namespaced))
}

// NewObjects returns an empty object and list of a kind: typed when the
// kind is in the scheme, unstructured otherwise.
func (f *SharedClientFactory) NewObjects(gvk schema.GroupVersionKind) (runtime.Object, runtime.Object, error) {
	return f.clients.NewObjects(gvk)
}

// GVKForObject returns obj's kind.
func (f *SharedClientFactory) GVKForObject(obj runtime.Object) (schema.GroupVersionKind, error) {
	return f.clients.GVKForObject(obj)
}

// GVKForResource returns a resource's kind, from discovery.
func (f *SharedClientFactory) GVKForResource(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return f.clients.RESTMapper().KindFor(gvr)
}

// IsNamespaced reports whether a kind's objects live in namespaces.
func (f *SharedClientFactory) IsNamespaced(gvk schema.GroupVersionKind) (bool, error) {
	_, namespaced, err := f.ResourceForGVK(gvk)
	return namespaced, err
}

// ResourceForGVK returns a kind's resource and scope, from discovery.
func (f *SharedClientFactory) ResourceForGVK(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
	mapping, err := f.clients.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, false, err
	}
	return mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// IsHealthy reports whether the API server answers /version, as lasso's
// factory does.
func (f *SharedClientFactory) IsHealthy(ctx context.Context) bool {
	c, err := f.clients.ForResourceKind(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "Namespace", false)
	if err != nil {
		return false
	}
	_, err = c.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	return err == nil
}

// NotInSchemeError is the failure of a controller whose kind is not in the
// scheme Lariat's client factory decodes with. wrangler's generated
// controllers cast every object to their Go type, and Lariat decodes a kind
// it does not know into *unstructured.Unstructured, so without this check
// every handler of the kind would panic on every retry.
type NotInSchemeError struct {
	GVK schema.GroupVersionKind
}

// Error names the kind and what to pass.
func (e *NotInSchemeError) Error() string {
	return fmt.Sprintf("lasso: %s is not in the scheme Lariat's client factory was given, so its objects would not decode "+
		"to the Go type wrangler's controllers expect: pass wrangler's schemes.All (github.com/rancher/wrangler/v3/pkg/schemes), "+
		"where wrangler's generated packages register their kinds, as the scheme (client.SharedClientFactoryOptions.Scheme, "+
		"or the scheme argument of NewSharedControllerFactoryFromConfigWithOptions, where nil means it), "+
		"or register the kind's AddToScheme in the scheme you pass", e.GVK)
}

// checkTyped fails with a *NotInSchemeError when gvk's objects would be
// decoded as unstructured.
func (f *SharedClientFactory) checkTyped(gvk schema.GroupVersionKind) error {
	if !f.clients.Scheme().Recognizes(gvk) {
		return &NotInSchemeError{GVK: gvk}
	}
	return nil
}

// failingClient is lasso's client of a resource whose controller could not
// be made: every request fails with err, instead of a nil client that
// wrangler's generated controllers would dereference.
func failingClient(gvr schema.GroupVersionResource, kind string, namespaced bool, err error) *lassoclient.Client {
	cfg := &rest.Config{Host: "https://lariat.invalid", ContentConfig: rest.ContentConfig{NegotiatedSerializer: clientscheme.Codecs.WithoutConversion()}}
	rc, rcErr := rest.UnversionedRESTClientForConfigAndClient(cfg, &http.Client{Transport: failingTransport{err}})
	if rcErr != nil {
		return nil
	}
	return lassoclient.NewClient(gvr, kind, namespaced, rc, 0)
}

// failingTransport answers every request with its error.
type failingTransport struct{ err error }

func (t failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, t.err }
