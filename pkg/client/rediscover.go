package client

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Rediscover re-reads discovery on account of gk after a request for it
// answered NotFound for the whole resource (a list, or a request of a kind
// whose CRD was deleted): the REST mapping it was sent through may be stale,
// and the mapper only re-reads on its own when a lookup misses. It also drops
// the cached clients of gk, so the next ForKind maps the kind afresh and
// fails with a NoMatch error when it is no longer served. It does nothing
// and returns false when gk already caused RediscoverBurst re-reads within
// RediscoverInterval, or when the factory's mapper cannot be reset.
func (f *SharedClientFactory) Rediscover(gk schema.GroupKind) bool {
	resettable, ok := f.mapper.(meta.ResettableRESTMapper)
	if !ok || !f.limits.allow(kindKey(gk)) {
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
