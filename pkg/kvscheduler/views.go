package kvscheduler

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// View selects the values returned by DumpValues, after the VPP-Agent's
// dump views.
type View int

// The views.
const (
	// CachedView is the scheduler's current graph: every value with a
	// status, as applied if it exists in the southbound, otherwise as the
	// scheduler holds it (e.g. a PENDING value as it waits to be created).
	// It is the zero View because it is the one that explains the statuses.
	CachedView View = iota
	// NBView is the desired values, as last requested by the northbound,
	// whether or not they could be applied.
	NBView
	// SBView is the values the scheduler believes exist in the southbound:
	// as created or updated by it, or as last retrieved or notified,
	// including the values the southbound owns (OBTAINED) and the ones
	// derived from existing values.
	SBView
)

var viewNames = [...]string{"cached", "NB", "SB"}

// String returns the name of the view used by the REST API.
func (v View) String() string {
	if v >= 0 && int(v) < len(viewNames) {
		return viewNames[v]
	}
	return fmt.Sprintf("View(%d)", int(v))
}

// valueViews is a snapshot of the values published with the statuses.
// The maps are shallow copies, replaced and never modified once published;
// the values they point to are never modified either (see actualVal). A
// shallow copy costs a fraction of a copy of every value, which matters
// because it is taken by every transaction.
type valueViews struct {
	desired map[string]*desiredVal
	actual  map[string]*actualVal
	// other holds the values of the graph that are not in actual when
	// they differ from the desired ones: derived values not created yet.
	other map[string]KVWithMetadata
}

// snapshotViews copies the desired and actual maps for DumpValues. It runs
// on the worker goroutine, which owns the maps; readers get the copy
// because they must not wait for (or deadlock with) the worker.
func (s *Scheduler) snapshotViews(t *target, statuses map[string]*ValueStatus) valueViews {
	v := valueViews{desired: maps.Clone(s.desired), actual: maps.Clone(s.actual)}
	for k, st := range statuses {
		if s.actual[k] != nil || !st.Derived {
			continue
		}
		n := t.nodes[k]
		if n == nil {
			n = t.pending[k]
		}
		if n == nil {
			// A derived value rejected before it joined the graph: its
			// value is not kept, and a dump has nothing to show.
			continue
		}
		if v.other == nil {
			v.other = map[string]KVWithMetadata{}
		}
		v.other[k] = KVWithMetadata{Key: k, Value: n.value, Origin: n.origin}
	}
	return v
}

// DumpValues returns the values of view, limited to those handled by
// descriptor and whose keys start with keyPrefix (empty strings select
// everything), sorted by key. The values are those of the last completed
// transaction; like statuses, they are safe to read from any goroutine.
// Values and metadata are shared with the scheduler: do not modify them.
// An unknown view returns nil.
func (s *Scheduler) DumpValues(descriptor, keyPrefix string, view View) []KVWithMetadata {
	if view < CachedView || view > SBView {
		return nil
	}
	var out []KVWithMetadata
	s.smu.RLock()
	v := s.views
	// The descriptor of a desired value is the one of its status: the
	// registry belongs to the worker goroutine.
	nb := func(k string, dv *desiredVal) {
		if st := s.statuses[k]; descriptor == "" || st != nil && st.Descriptor == descriptor {
			out = append(out, KVWithMetadata{Key: k, Value: dv.value, Origin: FromNB})
		}
	}
	sb := func(k string, a *actualVal) {
		if descriptor == "" || a.d != nil && a.d.Name == descriptor {
			out = append(out, KVWithMetadata{Key: k, Value: a.value, Metadata: a.metadata, Origin: a.origin})
		}
	}
	switch view {
	case NBView:
		for k, dv := range v.desired {
			if strings.HasPrefix(k, keyPrefix) {
				nb(k, dv)
			}
		}
	case SBView:
		for k, a := range v.actual {
			if strings.HasPrefix(k, keyPrefix) {
				sb(k, a)
			}
		}
	default:
		for k, st := range s.statuses {
			if !strings.HasPrefix(k, keyPrefix) {
				continue
			}
			if a := v.actual[k]; a != nil {
				sb(k, a)
			} else if kv, ok := v.other[k]; ok {
				if descriptor == "" || st.Descriptor == descriptor {
					out = append(out, kv)
				}
			} else if dv := v.desired[k]; dv != nil {
				nb(k, dv)
			}
		}
	}
	s.smu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
