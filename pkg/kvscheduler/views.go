package kvscheduler

import (
	"fmt"
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

// DumpValues returns the values of view, limited to those handled by
// descriptor and whose keys start with keyPrefix (empty strings select
// everything), sorted by key. The values are those of the last completed
// transaction; like statuses, they are safe to read from any goroutine.
// Values and metadata are shared with the scheduler: do not modify them.
// An unknown view returns nil. A descriptor's values include the derived
// values it handles (the VPP-Agent's dump by descriptor lists base values
// only; see the deviations in docs/kvscheduler.md).
func (s *Scheduler) DumpValues(descriptor, keyPrefix string, view View) []KVWithMetadata {
	if view < CachedView || view > SBView {
		return nil
	}
	var out []KVWithMetadata
	s.smu.RLock()
	for k, e := range s.statuses {
		v := &e.view
		if !strings.HasPrefix(k, keyPrefix) || descriptor != "" && v.desc != descriptor {
			continue
		}
		switch view {
		case NBView:
			if v.nb != nil {
				out = append(out, KVWithMetadata{Key: k, Value: v.nb, Metadata: v.metadata, Origin: FromNB})
			}
		case SBView:
			if v.sb != nil {
				out = append(out, KVWithMetadata{Key: k, Value: v.sb, Metadata: v.metadata, Origin: v.origin})
			}
		default:
			if v.cached != nil {
				kv := KVWithMetadata{Key: k, Value: v.cached, Origin: v.origin}
				if v.sb != nil {
					kv.Metadata = v.metadata
				}
				out = append(out, kv)
			}
		}
	}
	s.smu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
