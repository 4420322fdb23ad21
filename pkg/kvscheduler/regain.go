package kvscheduler

import (
	"slices"
	"strings"
)

// A read that finds a derived key the southbound's own gives it to the
// southbound (disown): the base no longer lists it, but is still wanted
// with a value that derives it, and stays CONFIGURED (no clash is judged
// until the base is applied again). Once the southbound no longer holds
// the key, the base is applied again, so that it derives the key again:
// otherwise nothing would create it short of a full resync, while the
// base is reported CONFIGURED without it.

// noteRegain records that base b, if wanted, waits for key to be free
// again (see applyRegained).
func (s *Scheduler) noteRegain(b *node, key string) {
	if b.want == nil || b.last == nil || b.last.value == nil {
		return
	}
	if s.regain == nil {
		s.regain = map[*node]string{}
	}
	s.regain[b] = key
}

// applyRegained applies again the bases noted by noteRegain whose key is
// free: no longer the southbound's own, nor another value's. A base no
// longer wanted or CONFIGURED, or whose request no longer derives the key,
// is dropped.
func (w *walker) applyRegained() {
	if len(w.s.regain) == 0 || w.ended() {
		return
	}
	var free []*node
	for b, key := range w.s.regain {
		switch {
		case !w.g.has(b) || b.state != Configured || b.want == nil || b.last == nil || b.last.value == nil ||
			b.base != "" || slices.Contains(b.derived, key) || !w.derives(b, key):
			// No longer waits for it: applied since (its apply judged the
			// key: derived it again, or found it another value's).
			delete(w.s.regain, b)
		case !w.clashesOn(b, key):
			delete(w.s.regain, b)
			free = append(free, b)
		}
	}
	slices.SortFunc(free, func(a, b *node) int { return strings.Compare(a.key, b.key) })
	for _, b := range free {
		w.run(frame{kind: fApply, key: b.key, value: b.last.value, last: b.last, origin: b.origin, n: b})
	}
}

// derives tells whether b's request derives key.
func (w *walker) derives(b *node, key string) bool {
	if b.d == nil || b.d.DerivedValues == nil {
		return false
	}
	kvs, err := callDerived(b.d, b.key, b.last.value)
	return err == nil && hasKey(kvs, key)
}
