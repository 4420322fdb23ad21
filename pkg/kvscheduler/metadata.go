package kvscheduler

import (
	"sort"
	"sync"
)

// MetadataMap is the read-only view of a descriptor's metadata: label to
// metadata of every value that has some. The scheduler owns and updates it.
type MetadataMap interface {
	// Get returns the metadata of the value with the given label.
	Get(label string) (metadata any, ok bool)
	// Labels returns the labels with metadata, sorted.
	Labels() []string
}

type metadataMap struct {
	mu sync.RWMutex
	m  map[string]any
	// reserved is set once the map was sized for a batch (see reserve).
	reserved bool
}

func newMetadataMap() *metadataMap { return &metadataMap{m: map[string]any{}} }

// Get implements MetadataMap.
func (mm *metadataMap) Get(label string) (any, bool) {
	mm.mu.RLock()
	defer mm.mu.RUnlock()
	v, ok := mm.m[label]
	return v, ok
}

// Labels implements MetadataMap.
func (mm *metadataMap) Labels() []string {
	mm.mu.RLock()
	defer mm.mu.RUnlock()
	out := make([]string, 0, len(mm.m))
	for l := range mm.m {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// reserve makes room for about n labels in an empty map (a map cannot
// grow in place: only an empty one is replaced), once: a descriptor whose
// values have no metadata keeps its map empty, and every batch would make
// it anew.
func (mm *metadataMap) reserve(n int) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if len(mm.m) == 0 && !mm.reserved {
		mm.m = make(map[string]any, n)
		mm.reserved = true
	}
}

func (mm *metadataMap) put(label string, md any) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if md == nil {
		delete(mm.m, label)
		return
	}
	mm.m[label] = md
}
