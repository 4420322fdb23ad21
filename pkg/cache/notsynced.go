package cache

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// NotSyncedError is returned by reads of a cache whose informer has not
// synced: it has not listed yet (a slow list, RBAC that does not allow
// listing, a missing CRD), it was never started, or its factory's context
// ended. Such a cache holds some of the kind's objects or none, so an empty
// list or a miss would be a guess; callers must not read it as "nothing
// exists". A running informer lists on its own, so retrying later is the
// answer: a controller handler returns the error and its key is retried,
// quietly while the informer runs.
//
// wrangler's and lasso's caches return whatever the informer's store holds
// instead, and a miss there is NotFound.
type NotSyncedError struct {
	// Resource names the kind whose cache was read.
	Resource schema.GroupResource
	// Stopped is set when the informer is not running (never started, or
	// its factory's context ended): it will not sync until its factory is
	// started again, so waiting alone does not help.
	Stopped bool
}

// Error names the kind, and says when its informer is not running.
func (e *NotSyncedError) Error() string {
	if e.Stopped {
		return fmt.Sprintf("the %s cache has not synced: its informer is not running (start the factory after creating it)", e.Resource)
	}
	return fmt.Sprintf("the %s cache has not synced: its objects are not known yet", e.Resource)
}

// IsNotSynced reports whether err, or an error it wraps, is a
// *NotSyncedError.
func IsNotSynced(err error) bool {
	var e *NotSyncedError
	return errors.As(err, &e)
}

// CheckSynced returns nil when informer has synced, else a *NotSyncedError
// naming resource. Informers of a SharedCacheFactory count as synced only
// while their run's context is live; for other informers a stop is seen
// only once their run returned.
func CheckSynced(informer cache.SharedIndexInformer, resource schema.GroupResource) error {
	if informer.HasSynced() {
		return nil
	}
	stopped := informer.IsStopped()
	if r, ok := informer.(*restartableInformer); ok {
		stopped = !r.running()
	}
	return &NotSyncedError{Resource: resource, Stopped: stopped}
}

// NotCoveredError is returned by reads of a cache limited to one namespace
// (Options.Namespace) that ask about another: the cache knows nothing of it,
// so a miss or an empty list there would be a guess.
type NotCoveredError struct {
	// Resource names the kind whose cache was read.
	Resource schema.GroupResource
	// Namespace is the namespace asked about; Covered the only one the
	// cache holds.
	Namespace, Covered string
}

// Error names the kind and both namespaces.
func (e *NotCoveredError) Error() string {
	return fmt.Sprintf("the %s cache covers namespace %q only: it cannot tell what exists in %q", e.Resource, e.Covered, e.Namespace)
}

// CheckNamespace returns a *NotCoveredError naming resource when informer,
// one of a SharedCacheFactory's, lists a single namespace and namespace is
// another one; nil otherwise (namespace empty asks for what the informer
// holds, and other informers are not checked).
func CheckNamespace(informer cache.SharedIndexInformer, resource schema.GroupResource, namespace string) error {
	r, ok := informer.(*restartableInformer)
	if !ok || namespace == "" || r.namespace == "" || namespace == r.namespace {
		return nil
	}
	return &NotCoveredError{Resource: resource, Namespace: namespace, Covered: r.namespace}
}
