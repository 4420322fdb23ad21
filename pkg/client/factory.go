package client

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/flowcontrol"
)

// SharedClientFactoryOptions configure NewSharedClientFactory. The zero value
// is a working default.
type SharedClientFactoryOptions struct {
	// Scheme maps Go types to kinds. Kinds in it are decoded into their Go
	// types, all others into *unstructured.Unstructured. Nil means
	// client-go's scheme of the built-in kinds.
	Scheme *runtime.Scheme
	// Mapper maps kinds to resources. Nil means a discovery-backed mapper
	// that refreshes itself when a kind or resource is not found.
	Mapper meta.RESTMapper
	// Timeout bounds each request but watches. Zero means DefaultTimeout;
	// negative means no timeout.
	Timeout time.Duration
	// JSONOnly turns protobuf off for every kind, for proxies that only pass
	// JSON, for measuring what protobuf saves, and for custom resource types
	// that carry generated protobuf methods (the API server takes no
	// protobuf for custom resources). Without it, kinds whose Go types have
	// protobuf marshalling (the built-in kinds) use protobuf.
	JSONOnly bool
}

// SharedClientFactory hands out one Client per resource, created the first
// time it is asked for, all sharing one HTTP connection pool and one
// client-side rate limiter. It is safe for concurrent use.
type SharedClientFactory struct {
	config     *rest.Config
	httpClient *http.Client
	scheme     *runtime.Scheme
	codecs     serializer.CodecFactory
	unstruct   unstructuredSerializer
	mapper     meta.RESTMapper
	timeout    time.Duration
	jsonOnly   bool

	// limits rate-limits discovery re-reads per kind, for the mapper's
	// misses and for Rediscover.
	limits *refreshLimits

	mu      sync.Mutex
	clients map[schema.GroupVersionResource]*Client
}

// NewSharedClientFactory returns a factory for the cluster cfg points at. It
// makes no request: discovery runs on the first kind-to-resource lookup.
//
// When cfg sets neither QPS nor a RateLimiter, client-side rate limiting is
// off: client-go's default of 5 requests per second throttles any operator
// that manages more than a few objects, and API Priority and Fairness already
// protects the server. With QPS (and Burst) set, one token bucket limits
// every request of the factory (every resource, discovery included) to QPS
// in total; a RateLimiter in cfg is shared the same way.
func NewSharedClientFactory(cfg *rest.Config, opts *SharedClientFactoryOptions) (*SharedClientFactory, error) {
	if opts == nil {
		opts = &SharedClientFactoryOptions{}
	}
	config := rest.CopyConfig(cfg)
	switch {
	case config.RateLimiter != nil:
	case config.QPS == 0:
		config.QPS = -1
	case config.QPS > 0:
		// client-go gives every REST client made from a config without a
		// RateLimiter a token bucket of its own, which would let a factory
		// with N resources send N times QPS. One limiter, shared by every
		// copy of the config, bounds the factory as a whole.
		burst := config.Burst
		if burst <= 0 {
			burst = rest.DefaultBurst
		}
		config.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(config.QPS, burst)
	}
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, fmt.Errorf("client factory: %w", err)
	}
	f := &SharedClientFactory{
		config:     config,
		httpClient: httpClient,
		scheme:     opts.Scheme,
		mapper:     opts.Mapper,
		timeout:    opts.Timeout,
		jsonOnly:   opts.JSONOnly,
		clients:    map[schema.GroupVersionResource]*Client{},
		limits:     newRefreshLimits(RediscoverInterval, RediscoverBurst),
	}
	if f.scheme == nil {
		f.scheme = scheme.Scheme
	}
	f.codecs = serializer.NewCodecFactory(f.scheme)
	f.unstruct = newUnstructuredSerializer()
	switch {
	case f.timeout == 0:
		f.timeout = DefaultTimeout
	case f.timeout < 0:
		f.timeout = 0
	}
	if f.mapper == nil {
		disco, err := discovery.NewDiscoveryClientForConfigAndClient(config, httpClient)
		if err != nil {
			return nil, fmt.Errorf("client factory: %w", err)
		}
		f.mapper = &refreshingMapper{
			ResettableRESTMapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
			limits:               f.limits,
		}
	}
	return f, nil
}

// Scheme returns the scheme that decides which kinds are typed.
func (f *SharedClientFactory) Scheme() *runtime.Scheme { return f.scheme }

// RESTMapper returns the mapper between kinds and resources.
func (f *SharedClientFactory) RESTMapper() meta.RESTMapper { return f.mapper }

// ForObject returns the client for obj's kind, taken from the scheme for
// typed objects and from apiVersion/kind for unstructured ones.
func (f *SharedClientFactory) ForObject(obj runtime.Object) (*Client, error) {
	gvk, err := f.GVKForObject(obj)
	if err != nil {
		return nil, err
	}
	return f.ForKind(gvk)
}

// ForKind returns the client for a kind, looking up its resource and scope.
// An empty version means the kind's preferred served version.
func (f *SharedClientFactory) ForKind(gvk schema.GroupVersionKind) (*Client, error) {
	mapping, err := f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", gvk, err)
	}
	return f.ForResourceKind(mapping.Resource, gvk.Kind, mapping.Scope.Name() == meta.RESTScopeNameNamespace)
}

// ForResource returns the client for a resource, looking up its kind.
func (f *SharedClientFactory) ForResource(gvr schema.GroupVersionResource, namespaced bool) (*Client, error) {
	gvk, err := f.mapper.KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", gvr, err)
	}
	return f.ForResourceKind(gvr, gvk.Kind, namespaced)
}

// ForResourceKind returns the client for a resource whose kind and scope the
// caller knows. It makes no request.
func (f *SharedClientFactory) ForResourceKind(gvr schema.GroupVersionResource, kind string, namespaced bool) (*Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// A cached client made for another kind or scope of the resource (a
	// CRD recreated differently) is replaced, not handed out.
	if c, ok := f.clients[gvr]; ok && c.gvk.Kind == kind && c.namespaced == namespaced {
		return c, nil
	}
	cfg := f.restConfigFor(gvr.GroupVersion().WithKind(kind))
	restClient, err := rest.RESTClientForConfigAndClient(cfg, f.httpClient)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", gvr, err)
	}
	c := newClient(gvr, kind, namespaced, restClient, cfg, f.timeout)
	f.clients[gvr] = c
	return c, nil
}

// restConfigFor configures the wire format: protobuf for kinds whose Go
// types have protobuf marshalling (the built-in kinds), which the API server
// serves faster and smaller than JSON, typed JSON for other kinds in the
// scheme, and unstructured JSON for the rest.
//
// The choice follows the Go type, not which scheme holds it: programs
// register their custom kinds in client-go's global scheme (for event
// recorders), and a custom kind sent as protobuf fails in the encoder.
func (f *SharedClientFactory) restConfigFor(gvk schema.GroupVersionKind) *rest.Config {
	cfg := rest.CopyConfig(f.config)
	gv := gvk.GroupVersion()
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	switch {
	case !f.scheme.Recognizes(gvk):
		cfg.NegotiatedSerializer = f.unstruct
		cfg.ContentType = runtime.ContentTypeJSON
		cfg.AcceptContentTypes = runtime.ContentTypeJSON
	case !f.jsonOnly && f.protobufKind(gvk):
		cfg.NegotiatedSerializer = f.codecs.WithoutConversion()
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	default:
		cfg.NegotiatedSerializer = f.codecs.WithoutConversion()
		cfg.ContentType = runtime.ContentTypeJSON
		cfg.AcceptContentTypes = runtime.ContentTypeJSON
	}
	return cfg
}

// GVKForObject returns obj's kind: from the scheme for typed objects, from
// apiVersion/kind for unstructured ones.
func (f *SharedClientFactory) GVKForObject(obj runtime.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		gvk := u.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return gvk, fmt.Errorf("unstructured object has no apiVersion or kind")
		}
		return gvk, nil
	}
	gvks, _, err := f.scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gvks[0], nil
}

// NewObjects returns an empty object and list for a kind: typed when the
// kind is in the scheme, unstructured otherwise.
func (f *SharedClientFactory) NewObjects(gvk schema.GroupVersionKind) (obj, list runtime.Object, err error) {
	if f.scheme.Recognizes(gvk) {
		if obj, err = f.scheme.New(gvk); err != nil {
			return nil, nil, err
		}
		listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
		if list, err = f.scheme.New(listGVK); err != nil {
			return nil, nil, fmt.Errorf("kind %s is in the scheme but %s is not: %w", gvk, listGVK.Kind, err)
		}
		return obj, list, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	ul := &unstructured.UnstructuredList{}
	ul.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return u, ul, nil
}

// protobufKind reports whether the kind and its list, as the scheme builds
// them, can be written and read as protobuf. Requests carry single objects
// and list responses, so both must.
func (f *SharedClientFactory) protobufKind(gvk schema.GroupVersionKind) bool {
	obj, list, err := f.NewObjects(gvk)
	return err == nil && speaksProtobuf(obj) && speaksProtobuf(list)
}
