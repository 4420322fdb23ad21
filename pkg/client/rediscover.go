package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// Rediscover re-reads discovery on account of gk after a request for it
// answered NotFound for the whole resource (a list, or a request of a kind
// whose CRD was deleted): the REST mapping it was sent through may be stale,
// and the mapper only re-reads on its own when a lookup misses. It also drops
// the cached clients of gk, so the next ForKind maps the kind afresh and
// fails with a NoMatch error when it is no longer served. It does nothing
// and returns false when Rediscover was already called for gk
// RediscoverBurst times within RediscoverInterval, or when the factory's
// mapper cannot be reset. Its budget is its own, not the one of lookups that
// missed gk: a kind whose lookups missed while its CRD was being installed
// must still be refreshed when its CRD is deleted right after.
func (f *SharedClientFactory) Rediscover(gk schema.GroupKind) bool {
	resettable, ok := f.mapper.(meta.ResettableRESTMapper)
	if !ok || !f.limits.allow(staleKindKey(gk)) {
		return false
	}
	resettable.Reset()
	f.mu.Lock()
	defer f.mu.Unlock()
	for gvr, c := range f.clients {
		if gvr.Group == gk.Group && c.gvk.Kind == gk.Kind {
			delete(f.clients, gvr)
		}
	}
	return true
}

// Served reads discovery from the API server, bypassing the factory's
// cache, and reports whether gk is served. When discovery of gk's group
// failed (an aggregated API that is down, say) it returns an error rather
// than false: a kind missing from an incomplete discovery is not a kind that
// is gone, and callers that would act on its absence (drop it, prune for it)
// must not. The factory's mapper, by contrast, answers NoMatch for the kinds
// of such a group.
func (f *SharedClientFactory) Served(ctx context.Context, gk schema.GroupKind) (bool, error) {
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(f.config, f.httpClient)
	if err != nil {
		return false, err
	}
	_, lists, err := disco.ServerGroupsAndResourcesWithContext(ctx)
	var failed *discovery.ErrGroupDiscoveryFailed
	if errors.As(err, &failed) {
		for gv, cause := range failed.Groups {
			if gv.Group == gk.Group {
				return false, fmt.Errorf("discovery of %s failed: %w", gv, cause)
			}
		}
	} else if err != nil {
		return false, err
	}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil || gv.Group != gk.Group {
			continue
		}
		for _, r := range list.APIResources {
			if r.Kind == gk.Kind && !strings.Contains(r.Name, "/") {
				return true, nil
			}
		}
	}
	return false, nil
}
