package kvscheduler

import "slices"

// The bookkeeping of a read (a refresh, a read-back): which keys it
// reported, the derived keys of one value, the origins of the correlate
// entries.

// readMarks records the keys one read (one descriptor's Retrieve)
// reported, as a mark on their nodes: a resync that reads every value
// builds no set of keys. Every key reported has a node (refreshValue
// makes one), and nodes leave the graph only after the transaction.
type readMarks struct {
	g   *graph
	gen uint64
}

// newRead starts the marks of a read.
func (s *Scheduler) newRead() readMarks {
	s.readGen++
	return readMarks{g: s.g, gen: s.readGen}
}

func (r readMarks) has(key string) bool {
	n := r.g.nodes[key]
	return n != nil && n.readGen == r.gen
}

func (r readMarks) hasNode(n *node) bool { return n.readGen == r.gen }
func (r readMarks) add(n *node)          { n.readGen = r.gen }

// keySet is a set of keys for the few derived values of one read value:
// an array while it is small (no allocation per value read), a map past
// that.
type keySet struct {
	n   int
	arr [16]string
	big map[string]bool
}

func (ks *keySet) has(k string) bool {
	if ks.big != nil {
		return ks.big[k]
	}
	return slices.Contains(ks.arr[:ks.n], k)
}

func (ks *keySet) add(k string) {
	switch {
	case ks.big != nil:
		ks.big[k] = true
	case ks.n < len(ks.arr):
		ks.arr[ks.n] = k
		ks.n++
	default:
		ks.big = make(map[string]bool, 2*ks.n)
		for _, x := range ks.arr {
			ks.big[x] = true
		}
		ks.big[k] = true
	}
}

// correlation finds the origins of the correlate entries given to a
// Retrieve; the index is built only if a retrieved value needs it.
type correlation struct {
	kvs     []KVWithMetadata
	origins map[string]Origin
}

// origin returns the origin of key's correlate entry, if any.
func (c *correlation) origin(key string) Origin {
	if c == nil || len(c.kvs) == 0 {
		return UnknownOrigin
	}
	if c.origins == nil {
		c.origins = make(map[string]Origin, len(c.kvs))
		for _, kv := range c.kvs {
			c.origins[kv.Key] = kv.Origin
		}
	}
	return c.origins[key]
}
