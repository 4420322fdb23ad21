package eventloop

import (
	"fmt"
	"sort"
)

// MergeFunc combines the values of one key when external configuration
// overlaps with the values handlers put (the internal configuration). below
// is the internal value, or the result of merging lower-precedence sources,
// and nil when there is none; above is the value of source. Without a
// MergeFunc, above simply overrides below. The function runs on the loop
// goroutine and must not modify below or above; an error (or a panic) fails
// the commit of the event.
type MergeFunc func(key string, below, above any, source string) (any, error)

// externalConfig keeps the inputs needed to merge external configuration into
// every transaction: the internal values (what handlers put, as of the last
// processed event) and the values of each external source. It is used only by
// the loop goroutine.
type externalConfig struct {
	merge      MergeFunc
	precedence map[string]int // configured rank, 0 = highest
	internal   map[string]any
	sources    map[string]map[string]any
	order      []string // source names, lowest precedence first
}

func newExternalConfig(merge MergeFunc, precedence []string) *externalConfig {
	x := &externalConfig{
		merge:      merge,
		precedence: make(map[string]int, len(precedence)),
		internal:   make(map[string]any),
		sources:    make(map[string]map[string]any),
	}
	for i, s := range precedence {
		x.precedence[s] = i
	}
	return x
}

// lower reports whether source a ranks below source b.
func (x *externalConfig) lower(a, b string) bool {
	pa, listedA := x.precedence[a]
	pb, listedB := x.precedence[b]
	switch {
	case listedA && listedB:
		return pa > pb
	case listedA != listedB:
		return !listedA
	default:
		return a > b
	}
}

func (x *externalConfig) reorder() {
	x.order = x.order[:0]
	for s := range x.sources {
		x.order = append(x.order, s)
	}
	sort.Slice(x.order, func(i, j int) bool { return x.lower(x.order[i], x.order[j]) })
}

// applyEvent updates the source caches for external config events, before
// handlers see them (so that they can read the new values through the loop's
// merge). It returns the keys an ExternalConfigChange touched, sorted.
func (x *externalConfig) applyEvent(ev Event) []string {
	switch e := ev.(type) {
	case *ExternalConfigChange:
		if len(e.Changes) == 0 {
			return nil
		}
		src := x.sources[e.Source]
		keys := make([]string, 0, len(e.Changes))
		for k, v := range e.Changes {
			keys = append(keys, k)
			if v == nil {
				delete(src, k)
				continue
			}
			if src == nil {
				src = make(map[string]any)
				x.sources[e.Source] = src
			}
			src[k] = v
		}
		if src != nil && len(src) == 0 {
			delete(x.sources, e.Source)
		}
		x.reorder()
		sort.Strings(keys)
		return keys
	case *ExternalConfigResync:
		if len(e.Config) == 0 {
			delete(x.sources, e.Source)
		} else {
			src := make(map[string]any, len(e.Config))
			for k, v := range e.Config {
				if v != nil {
					src[k] = v
				}
			}
			x.sources[e.Source] = src
		}
		x.reorder()
	}
	return nil
}

// effective returns the value to commit for key given its internal value
// (nil when none): the internal value with every source's value merged on
// top, lowest precedence first.
func (x *externalConfig) effective(key string, internal any) (any, error) {
	v := internal
	for _, s := range x.order {
		above, ok := x.sources[s][key]
		if !ok {
			continue
		}
		if x.merge == nil {
			v = above
			continue
		}
		merged, err := x.callMerge(key, v, above, s)
		if err != nil {
			return nil, fmt.Errorf("merging external value of %q from source %q: %w", key, s, err)
		}
		v = merged
	}
	return v, nil
}

// updateValues returns the values to commit for an update transaction.
func (x *externalConfig) updateValues(t *txn, extKeys []string) ([]KeyValue, error) {
	if len(x.sources) == 0 && len(extKeys) == 0 {
		return t.ops, nil
	}
	out := make([]KeyValue, 0, len(t.ops)+len(extKeys))
	for _, kv := range t.ops {
		v, err := x.effective(kv.Key, kv.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, KeyValue{Key: kv.Key, Value: v})
	}
	for _, k := range extKeys {
		if t.find(k) >= 0 {
			continue
		}
		v, err := x.effective(k, x.internal[k])
		if err != nil {
			return nil, err
		}
		out = append(out, KeyValue{Key: k, Value: v})
	}
	return out, nil
}

// resyncValues returns the complete desired state for a resync transaction.
func (x *externalConfig) resyncValues(t *txn) ([]KeyValue, error) {
	out := make([]KeyValue, 0, len(t.ops))
	for _, kv := range t.ops {
		if kv.Value == nil {
			continue
		}
		v, err := x.effective(kv.Key, kv.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, KeyValue{Key: kv.Key, Value: v})
	}
	if len(x.sources) == 0 {
		return out, nil
	}
	var extOnly []string
	seen := make(map[string]bool)
	for _, src := range x.sources {
		for k := range src {
			if seen[k] {
				continue
			}
			seen[k] = true
			if i := t.find(k); i < 0 || t.ops[i].Value == nil {
				extOnly = append(extOnly, k)
			}
		}
	}
	sort.Strings(extOnly)
	for _, k := range extOnly {
		v, err := x.effective(k, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, KeyValue{Key: k, Value: v})
	}
	return out, nil
}

// remember records what handlers put as the new internal configuration.
func (x *externalConfig) remember(t *txn, resync bool) {
	if resync {
		x.internal = make(map[string]any, len(t.ops))
	}
	for _, kv := range t.ops {
		if kv.Value == nil {
			delete(x.internal, kv.Key)
		} else {
			x.internal[kv.Key] = kv.Value
		}
	}
}
