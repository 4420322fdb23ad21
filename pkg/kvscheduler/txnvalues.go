package kvscheduler

import (
	"slices"
	"strings"
)

// txnValue is one value a transaction applies, with its request.
type txnValue struct {
	key   string
	value any
	last  *update
}

// txnValues lists what a transaction applies, in the reference's order:
// sorted by key, then deletes, re-creates, creates and updates. A full or
// upstream resync deletes the northbound values it does not name; a
// downstream resync applies the last requests again.
func (s *Scheduler) txnValues(t *Txn, scope map[string]bool, seq uint64) []txnValue {
	var out []txnValue
	req := func(v any) *update { return &update{value: v, seq: seq, retry: t.retry, revert: t.revert} }
	switch t.resync {
	case NoResync, FullResync, UpstreamResync:
		out = make([]txnValue, 0, len(t.values))
		// The requests are allocated together: a transaction's values are
		// one allocation, not one each.
		reqs := make([]update, len(t.values))
		for i, kv := range t.values {
			reqs[i] = update{value: kv.Value, seq: seq, retry: t.retry, revert: t.revert}
			out = append(out, txnValue{kv.Key, kv.Value, &reqs[i]})
		}
		if t.resync != NoResync {
			for k, n := range s.g.nodes {
				if _, named := t.index[k]; !named && n.base == "" && n.origin == FromNB && (n.want != nil || n.exists()) {
					out = append(out, txnValue{k, nil, req(nil)})
				}
			}
		}
	case DownstreamResync:
		add := func(n *node) {
			if n != nil && n.base == "" && n.origin == FromNB && n.last != nil && (n.last.value != nil || n.exists()) {
				out = append(out, txnValue{n.key, n.last.value, n.last})
			}
		}
		if scope == nil {
			for _, n := range s.g.nodes {
				add(n)
				// Values of the northbound's kinds nobody requested
				// (DISCOVERED) go, as with a full resync.
				if n.base == "" && n.origin == FromNB && n.last == nil && n.exists() {
					out = append(out, txnValue{n.key, nil, req(nil)})
				}
			}
			break
		}
		seen := map[string]bool{}
		for k := range scope {
			if n := s.g.nodes[k]; n != nil {
				if b := s.g.baseKey(n); !seen[b] {
					seen[b] = true
					add(s.g.nodes[b])
				}
			}
		}
	}
	group := func(v txnValue) int {
		n := s.g.nodes[v.key]
		switch {
		case v.value == nil:
			return 0
		case n == nil || !n.exists():
			return 2
		// The comparison is asked only of descriptors for which a change
		// is a re-create: for the others its answer does not matter.
		case n.d != nil && !n.implicit() && (n.d.Update == nil || n.d.UpdateWithRecreate != nil) &&
			!safeEqual(n.d, n.key, n.sb, v.value) &&
			(n.d.Update == nil || (&walker{s: s}).needsRecreate(n, v.value)):
			return 1
		}
		return 3
	}
	// Sorted by group, then key: one sort of (group, index) pairs.
	type entry struct {
		group int
		i     int
	}
	idx := make([]entry, len(out))
	for i, v := range out {
		idx[i] = entry{group(v), i}
	}
	slices.SortFunc(idx, func(a, b entry) int {
		if a.group != b.group {
			return a.group - b.group
		}
		return strings.Compare(out[a.i].key, out[b.i].key)
	})
	sorted := make([]txnValue, len(out))
	for i, e := range idx {
		sorted[i] = out[e.i]
	}
	return sorted
}
