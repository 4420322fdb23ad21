package client

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RediscoverInterval and RediscoverBurst bound how often a factory re-reads
// discovery on account of one kind (or resource): when a lookup misses it,
// and, counted apart, when Rediscover is asked after a request for it
// answered NotFound. A
// kind that keeps missing, or a CRD that flaps, thus costs at most
// RediscoverBurst discovery reads per interval instead of one per lookup;
// the burst of two lets a kind that missed once and was then installed be
// found at once.
const (
	RediscoverInterval = 3 * time.Second
	RediscoverBurst    = 2
)

// refreshingMapper re-reads discovery when a kind or resource is not found,
// so a CRD installed after the process started is usable without a restart.
// client-go's deferred mapper only resets when its cache is stale, and the
// in-memory discovery cache never reports itself stale. Resets are rate
// limited per kind or resource by limits.
type refreshingMapper struct {
	meta.ResettableRESTMapper
	limits *refreshLimits
}

// refreshLimits remembers when discovery was last re-read on account of
// each key, so each key causes at most burst re-reads per interval.
type refreshLimits struct {
	interval time.Duration
	burst    int
	mu       sync.Mutex
	recent   map[string][]time.Time // per key, the re-reads within the interval, oldest first
}

func newRefreshLimits(interval time.Duration, burst int) *refreshLimits {
	return &refreshLimits{interval: interval, burst: burst, recent: map[string][]time.Time{}}
}

// allow reports whether key may cause a re-read now, and if so counts it.
func (l *refreshLimits) allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	live := func(times []time.Time) []time.Time {
		for len(times) > 0 && now.Sub(times[0]) >= l.interval {
			times = times[1:]
		}
		return times
	}
	if len(l.recent) > 256 {
		// Forget keys whose re-reads are all older than the interval,
		// so the map stays as small as the set of recently missing kinds.
		for k, times := range l.recent {
			if len(live(times)) == 0 {
				delete(l.recent, k)
			}
		}
	}
	times := live(l.recent[key])
	if len(times) >= l.burst {
		l.recent[key] = times
		return false
	}
	l.recent[key] = append(times, now)
	return true
}

func kindKey(gk schema.GroupKind) string { return "kind " + gk.String() }

// staleKindKey is Rediscover's key for gk, apart from kindKey's: a mapping
// found stale and a kind found missing are different events.
func staleKindKey(gk schema.GroupKind) string { return "stale kind " + gk.String() }

func resourceKey(gr schema.GroupResource) string { return "resource " + gr.String() }

// retryOnMiss looks up again after re-reading discovery when lookup misses,
// unless key caused a re-read within the interval.
func retryOnMiss[T any](m *refreshingMapper, key string, lookup func() (T, error)) (T, error) {
	v, err := lookup()
	if err != nil && meta.IsNoMatchError(err) && m.limits.allow(key) {
		m.Reset()
		v, err = lookup()
	}
	return v, err
}

// RESTMapping implements meta.RESTMapper.
func (m *refreshingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return retryOnMiss(m, kindKey(gk), func() (*meta.RESTMapping, error) { return m.ResettableRESTMapper.RESTMapping(gk, versions...) })
}

// RESTMappings implements meta.RESTMapper.
func (m *refreshingMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return retryOnMiss(m, kindKey(gk), func() ([]*meta.RESTMapping, error) { return m.ResettableRESTMapper.RESTMappings(gk, versions...) })
}

// KindFor implements meta.RESTMapper.
func (m *refreshingMapper) KindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return retryOnMiss(m, resourceKey(gvr.GroupResource()), func() (schema.GroupVersionKind, error) { return m.ResettableRESTMapper.KindFor(gvr) })
}

// KindsFor implements meta.RESTMapper.
func (m *refreshingMapper) KindsFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return retryOnMiss(m, resourceKey(gvr.GroupResource()), func() ([]schema.GroupVersionKind, error) { return m.ResettableRESTMapper.KindsFor(gvr) })
}

// ResourceFor implements meta.RESTMapper.
func (m *refreshingMapper) ResourceFor(gvr schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return retryOnMiss(m, resourceKey(gvr.GroupResource()), func() (schema.GroupVersionResource, error) { return m.ResettableRESTMapper.ResourceFor(gvr) })
}

// ResourcesFor implements meta.RESTMapper.
func (m *refreshingMapper) ResourcesFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return retryOnMiss(m, resourceKey(gvr.GroupResource()), func() ([]schema.GroupVersionResource, error) { return m.ResettableRESTMapper.ResourcesFor(gvr) })
}
