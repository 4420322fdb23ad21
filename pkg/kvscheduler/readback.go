package kvscheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// refreshKeys is the refresh of a scoped downstream resync
// (Txn.WithResyncKeys): it re-reads the values of keys only, asking each
// of their descriptors once, in retrieve-dependency order. Its cost is in
// proportion to the keys, not to the values the scheduler holds, as long
// as the descriptors implement RetrieveKeys. Keys no descriptor claims, or
// whose descriptor cannot retrieve, stay as the scheduler believes them.
func (s *Scheduler) refreshKeys(w *walker, keys []string) {
	missing := s.readBack(w, s.withDerived(keys), func(d *regDescriptor, err error) { s.markUnread(w.rec, d, err) }, true)
	s.announce(missing)
}

// withDerived adds to keys the derived values the scheduler knows of
// theirs (and of those in turn): a base is read back with its derived
// values, as a full resync reads them, so that a repair of a base the
// southbound lost does not take its derived values for lost with it.
func (s *Scheduler) withDerived(keys []string) []string {
	out := keys
	var in map[string]bool
	for i := 0; i < len(out); i++ {
		n := s.g.nodes[out[i]]
		if n == nil || len(n.derived) == 0 {
			continue
		}
		if in == nil {
			out = slices.Clone(keys)
			in = make(map[string]bool, len(keys))
			for _, k := range keys {
				in[k] = true
			}
		}
		for _, k := range n.derived {
			if c := s.g.nodes[k]; c != nil && c.base == n.key && !in[k] {
				in[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// refreshFailed reads back, after failed operations, the bases of the
// failed values: one read per descriptor, so that retries start from what
// the southbound really holds (the base included). The bases are read
// with their derived values, as a scoped resync reads them: a derived
// value the southbound holds without its base is not taken for gone
// with it.
func (s *Scheduler) refreshFailed(w *walker) {
	var keys []string
	for _, n := range w.failedNs {
		if w.refreshed[n] || s.g.nodes[n.key] != n {
			continue
		}
		if w.refreshed == nil {
			w.refreshed = map[*node]bool{}
		}
		w.refreshed[n] = true
		var re *RetrieveError
		if n.err != nil && errors.As(n.err, &re) {
			continue // not attempted: nothing changed
		}
		for _, k := range []string{n.key, s.g.baseKey(n)} {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) > 0 {
		keys = s.withDerived(keys)
		s.readBack(w, keys, s.readFailed(w, keys), false)
		w.drain("the values read back")
	}
}

// readFailed returns what a read-back of keys does when d's read fails:
// the transaction's error names the read (TransactionError.Retrieve), and
// d's values among keys are unknown (neither what the scheduler believed
// before the operation nor absent) until the next transaction reads them
// (see readUnknown).
func (s *Scheduler) readFailed(w *walker, keys []string) func(*regDescriptor, error) {
	return func(d *regDescriptor, err error) {
		s.markUnread(w.rec, d, err)
		for _, k := range keys {
			if o, _ := s.reg.owner(k); o == d {
				if n := s.g.nodes[k]; n != nil && !n.heldUnknown() {
					n.setHeldUnknown(true)
					s.unknownNodes = append(s.unknownNodes, n)
				}
			}
		}
	}
}

// readUnknown reads, before a transaction decides anything, the values a
// failed read-back left unknown (node.heldUnknown): found, they are
// held as read; not reported, gone (with the values that need them
// checked again). A read that fails again leaves them unknown, and no
// operation of their descriptor is decided on them in this transaction
// (as for a failed resync read). The caller drains the walk.
func (s *Scheduler) readUnknown(w *walker) {
	if len(s.unknownNodes) == 0 || w.ended() {
		return
	}
	keys := make([]string, 0, len(s.unknownNodes))
	for _, n := range s.unknownNodes {
		n.setHeldUnknown(false)
		if s.g.has(n) {
			keys = append(keys, n.key)
		}
	}
	s.unknownNodes = nil
	slices.Sort(keys)
	keys = s.withDerived(keys)
	s.readBack(w, keys, s.readFailed(w, keys), false)
}

// readBack reads the values of keys, one call per descriptor, and records
// what it finds; it returns the configured values found missing. The
// derived values the values read derive, whose own descriptors read them
// (readsItself), are read next, as a full resync reads them: a base found
// is not taken to hold them, nor to lack them, without their read.
func (s *Scheduler) readBack(w *walker, keys []string, onErr func(*regDescriptor, error), announce bool) []string {
	var missing []string
	done := make(map[string]bool, len(keys))
	s.readSince = s.readGen + 1
	for round := 0; len(keys) > 0 && round < 64; round++ {
		for _, k := range keys {
			done[k] = true
		}
		missing = append(missing, s.readBackOnce(w, keys, onErr, announce)...)
		var next []string
		for _, k := range keys {
			n := s.g.nodes[k]
			if n == nil {
				continue
			}
			for _, dk := range n.derived {
				if c := s.g.nodes[dk]; c != nil && !done[dk] && c.base == k && s.readsItself(c) {
					next = append(next, dk)
				}
			}
		}
		keys = next
	}
	return missing
}

// readBackOnce reads the values of keys, one call per descriptor (see
// readBack).
func (s *Scheduler) readBackOnce(w *walker, keys []string, onErr func(*regDescriptor, error), announce bool) []string {
	byDesc := map[*regDescriptor][]string{}
	for _, k := range keys {
		d, err := s.reg.owner(k)
		if err != nil || d == nil || d.Retrieve == nil && d.RetrieveKeys == nil {
			continue
		}
		byDesc[d] = append(byDesc[d], k)
	}
	if len(byDesc) == 0 {
		return nil
	}
	order, err := s.reg.retrieveOrder(nil)
	if err != nil {
		w.rec.Errors = append(w.rec.Errors, err)
		return nil
	}
	var missing []string
	for _, desc := range order {
		d := s.reg.byName[desc.Name]
		ks := byDesc[d]
		if len(ks) == 0 {
			continue
		}
		correlate := s.believed(ks)
		got, err := s.retrieveKeys(w.ctx, d, ks, correlate)
		if err == nil {
			err = garbled(d, got, ks)
		}
		if err != nil {
			onErr(d, err)
			continue
		}
		seen := s.newRead()
		corr := &correlation{kvs: correlate}
		for _, kv := range got {
			if !slices.Contains(ks, kv.Key) || seen.has(kv.Key) {
				continue // not asked for: left alone
			}
			s.refreshValue(w, d, kv, s.g.nodes[kv.Key], seen, corr)
		}
		for _, k := range ks {
			n := s.g.nodes[k]
			if n == nil || n.d != d || n.readGen >= s.readSince {
				continue // reported (by any read of this read-back)
			}
			if n.base != "" && !s.readsItself(n) {
				// Its base's descriptor returns base values: a derived
				// value it leaves out exists as its base does.
				continue
			}
			if announce {
				missing = s.unreported(w, n, missing)
			} else if n.exists() || n.avail {
				s.gone(w, n, true)
			}
		}
	}
	return missing
}

// garbled returns the error of a read that reports a value it could not
// give (an empty key, a key without a value, or a key reported twice with
// values that are not equivalent), among keys (all when
// keys is nil): such a read is not a view of the southbound, and taking it
// for one would take the value for absent (create what exists, delete what
// needs it). It fails as a Retrieve that returned the error would.
func garbled(d *regDescriptor, got []KVWithMetadata, keys []string) error {
	if err := contradictory(d, got); err != nil {
		return err
	}
	for _, kv := range got {
		if kv.Key == "" {
			return errors.New("a value reported with an empty key")
		}
		if kv.Value == nil && (keys == nil || slices.Contains(keys, kv.Key)) {
			return fmt.Errorf("%q reported without a value", kv.Key)
		}
	}
	return nil
}

// believed is the correlate of a read of keys: the base values among
// them the scheduler believes exist (available), with their last requested
// value and metadata, as the reference's reads pass them. A value whose
// create failed, or a derived value, is not one of them.
func (s *Scheduler) believed(keys []string) []KVWithMetadata {
	var out []KVWithMetadata
	for _, k := range keys {
		if n := s.g.nodes[k]; n != nil && n.avail && n.base == "" && n.want != nil {
			out = append(out, KVWithMetadata{Key: k, Value: n.want, Metadata: n.metadata, Origin: n.origin})
		}
	}
	return out
}

// retrieveKeys reads the values of keys (all d's) with d.RetrieveKeys, or,
// without it, with d.Retrieve, which returns other keys too.
func (s *Scheduler) retrieveKeys(ctx context.Context, d *regDescriptor, keys []string, correlate []KVWithMetadata) (got []KVWithMetadata, err error) {
	// A Retrieve reads everything: its call names no key (see descCall).
	op, key := "Retrieve", ""
	if d.RetrieveKeys != nil {
		op, key = "RetrieveKeys", keys[0]
	}
	s.calling(d, op, key)
	defer s.returned()
	err = guard(func() (err error) {
		if d.RetrieveKeys != nil {
			got, err = d.RetrieveKeys(ctx, keys, correlate)
		} else {
			got, err = d.Retrieve(ctx, correlate)
		}
		return err
	})
	return got, err
}
