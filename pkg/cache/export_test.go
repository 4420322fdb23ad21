package cache

import "k8s.io/client-go/tools/cache"

// WiredObjects returns how many objects informer, a compact informer of a
// SharedCacheFactory, has read from the wire (compact_wire.go); -1 for
// any other informer.
func WiredObjects(informer cache.SharedIndexInformer) int64 {
	if i, ok := informer.(*restartableInformer); ok && i.codec != nil {
		return i.codec.wired.Load()
	}
	return -1
}
