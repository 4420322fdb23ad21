package client

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// refreshingMapper re-reads discovery when a kind or resource is not found,
// so a CRD installed after the process started is usable without a restart.
// client-go's deferred mapper only resets when its cache is stale, and the
// in-memory discovery cache never reports itself stale.
type refreshingMapper struct {
	meta.ResettableRESTMapper
}

func retryOnMiss[T any](m *refreshingMapper, lookup func() (T, error)) (T, error) {
	v, err := lookup()
	if err != nil && meta.IsNoMatchError(err) {
		m.Reset()
		v, err = lookup()
	}
	return v, err
}

// RESTMapping implements meta.RESTMapper.
func (m *refreshingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return retryOnMiss(m, func() (*meta.RESTMapping, error) { return m.ResettableRESTMapper.RESTMapping(gk, versions...) })
}

// RESTMappings implements meta.RESTMapper.
func (m *refreshingMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return retryOnMiss(m, func() ([]*meta.RESTMapping, error) { return m.ResettableRESTMapper.RESTMappings(gk, versions...) })
}

// KindFor implements meta.RESTMapper.
func (m *refreshingMapper) KindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return retryOnMiss(m, func() (schema.GroupVersionKind, error) { return m.ResettableRESTMapper.KindFor(gvr) })
}

// KindsFor implements meta.RESTMapper.
func (m *refreshingMapper) KindsFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return retryOnMiss(m, func() ([]schema.GroupVersionKind, error) { return m.ResettableRESTMapper.KindsFor(gvr) })
}

// ResourceFor implements meta.RESTMapper.
func (m *refreshingMapper) ResourceFor(gvr schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return retryOnMiss(m, func() (schema.GroupVersionResource, error) { return m.ResettableRESTMapper.ResourceFor(gvr) })
}

// ResourcesFor implements meta.RESTMapper.
func (m *refreshingMapper) ResourcesFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return retryOnMiss(m, func() ([]schema.GroupVersionResource, error) { return m.ResettableRESTMapper.ResourcesFor(gvr) })
}
