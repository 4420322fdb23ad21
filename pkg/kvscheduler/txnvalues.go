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
	n     *node // the key's node, if it has one
	group uint8 // see txnValues
}

// txnValues lists what a transaction applies, in the reference's order:
// sorted by key, then deletes, re-creates, creates and updates. A full or
// upstream resync deletes the northbound values it does not name; a
// downstream resync applies the last requests again.
//
// The nodes of the values the transaction names are marked later (see
// keymarks.go) as they are looked up, which tells the scan of a full or
// upstream resync which nodes are not named.
func (s *Scheduler) txnValues(w *walker, t *Txn, scope map[string]bool, seq uint64) []txnValue {
	var out []txnValue
	// The retry options are shared by the requests (a copy: the requests
	// outlive the transaction, which must not be kept with them).
	retry := &RetryOptions{}
	*retry = t.retry
	req := func(v any) *update { return &update{value: v, seq: seq, retry: retry, revert: t.revert} }
	switch t.resync {
	case NoResync, FullResync, UpstreamResync:
		out = make([]txnValue, 0, len(t.values))
		// The requests are allocated together: a transaction's values are
		// one allocation, not one each.
		reqs := make([]update, len(t.values))
		for i, kv := range t.values {
			reqs[i] = update{value: kv.Value, seq: seq, retry: retry, revert: t.revert}
			n := s.g.nodes[kv.Key]
			if n != nil {
				w.markNode(n, markLater)
			}
			out = append(out, txnValue{key: kv.Key, value: kv.Value, last: &reqs[i], n: n})
		}
		if t.resync != NoResync {
			var obtained []KeyValuePair
			for k, n := range s.g.nodes {
				// A failed delete of a value found gone since is settled
				// by the resync's delete too (blocked).
				if n.markSeq != w.seq && n.base == "" && n.origin == FromNB && (n.want != nil || n.exists() || n.blocked()) {
					out = append(out, txnValue{key: k, last: req(nil), n: n})
				} else if n.markSeq != w.seq && n.base == "" && n.origin == FromSB && n.exists() {
					obtained = append(obtained, KeyValuePair{Key: k, Value: n.sb})
				}
			}
			recordResyncValues(w.rec, out[len(t.values):], obtained)
		}
	case DownstreamResync:
		add := func(n *node) {
			if n != nil && n.base == "" && n.origin == FromNB && n.last != nil && (n.last.value != nil || n.exists()) {
				out = append(out, txnValue{key: n.key, value: n.last.value, last: n.last, n: n})
			}
		}
		// Values of the northbound's kinds nobody requested (DISCOVERED)
		// go, as with a full resync, and a scoped resync agrees with an
		// unscoped one on its keys.
		stray := func(n *node) {
			if n != nil && n.base == "" && n.origin == FromNB && n.last == nil && (n.exists() || n.blocked()) {
				out = append(out, txnValue{key: n.key, last: req(nil), n: n})
			}
		}
		if scope == nil {
			for _, n := range s.g.nodes {
				add(n)
				stray(n)
			}
			break
		}
		seen := map[string]bool{}
		for k := range scope {
			if n := s.g.nodes[k]; n != nil {
				if b := s.g.baseKey(n); !seen[b] {
					seen[b] = true
					add(s.g.nodes[b])
					stray(s.g.nodes[b])
				}
			}
		}
	}
	// Sorted by group, then key, in place.
	sorted := true
	for i := range out {
		out[i].group = uint8(s.txnGroup(out[i]))
		if i > 0 && sorted {
			a, b := &out[i-1], &out[i]
			sorted = a.group < b.group || a.group == b.group && a.key < b.key
		}
	}
	if !sorted {
		sortTxnValues(out)
	}
	return out
}

// recordResyncValues adds to the record of a full or upstream resync, as
// the reference's record has them, after the values it was given, the
// deletes it adds for the values it no longer requests, then the values
// obtained from the southbound it keeps (TxnRecord.Obtained), each sorted
// by key.
func recordResyncValues(rec *TxnRecord, deletes []txnValue, obtained []KeyValuePair) {
	if len(deletes)+len(obtained) == 0 {
		return
	}
	added := make([]KeyValuePair, 0, len(deletes)+len(obtained))
	for _, v := range deletes {
		added = append(added, KeyValuePair{Key: v.key})
	}
	byKey := func(a, b KeyValuePair) int { return strings.Compare(a.Key, b.Key) }
	slices.SortFunc(added, byKey)
	slices.SortFunc(obtained, byKey)
	rec.Values = append(append(rec.Values, added...), obtained...)
	rec.Obtained = len(obtained)
}

// sortTxnValues sorts vs by group, then key. It sorts a compact list of
// the keys and then moves the values into place: sorting the values
// themselves moved seven words per swap and took twice as long on a batch
// of 10,000.
func sortTxnValues(vs []txnValue) {
	type sortKey struct {
		key   string
		i     int
		group uint8
	}
	ks := make([]sortKey, len(vs))
	for i := range vs {
		ks[i] = sortKey{key: vs[i].key, i: i, group: vs[i].group}
	}
	slices.SortFunc(ks, func(a, b sortKey) int {
		if a.group != b.group {
			return int(a.group) - int(b.group)
		}
		return strings.Compare(a.key, b.key)
	})
	// ks[j].i is the value that goes to j: follow each cycle of the
	// permutation once, marking the places filled with -1.
	for j := range ks {
		if ks[j].i < 0 || ks[j].i == j {
			continue
		}
		tmp, k := vs[j], j
		for ks[k].i != j {
			next := ks[k].i
			vs[k], ks[k].i = vs[next], -1
			k = next
		}
		vs[k], ks[k].i = tmp, -1
	}
}

// txnGroup is the group of a transaction's value in the reference's
// order: deletes (0), re-creates (1), creates (2), updates (3).
func (s *Scheduler) txnGroup(v txnValue) int {
	n := v.n
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
