package kvscheduler

import (
	"fmt"
	"slices"
	"strings"
)

// contradictory returns the error of a read that reports one key twice
// with values d does not call equivalent (a descriptor bug, a list that
// paged over a change): the southbound cannot hold both, and taking either
// for what it holds may leave drift unrepaired (the first) or undo what is
// there (the second). Such a read fails, as a garbled one does. A key
// reported twice with one value stays a duplicate the refresh skips and
// records ("retrieved twice").
// A read sorted by key (most are) is checked without allocating: its
// duplicates are neighbours.
func contradictory(d *regDescriptor, got []KVWithMetadata) error {
	if len(got) < 2 {
		return nil
	}
	sorted := slices.IsSortedFunc(got, func(a, b KVWithMetadata) int { return strings.Compare(a.Key, b.Key) })
	if sorted {
		for i := 1; i < len(got); i++ {
			if got[i].Key == got[i-1].Key && !sameRead(d, got[i-1], got[i]) {
				return contradiction(got[i].Key)
			}
		}
		return nil
	}
	first := make(map[string]int, len(got))
	for i, kv := range got {
		j, ok := first[kv.Key]
		if !ok {
			first[kv.Key] = i
			continue
		}
		if !sameRead(d, got[j], kv) {
			return contradiction(kv.Key)
		}
	}
	return nil
}

// sameRead tells whether two entries of a read for one key report one
// value (both without a value is for garbled to name).
func sameRead(d *regDescriptor, a, b KVWithMetadata) bool {
	if a.Value == nil || b.Value == nil {
		return a.Value == nil && b.Value == nil
	}
	return safeEqual(d, a.Key, a.Value, b.Value)
}

func contradiction(key string) error {
	return fmt.Errorf("%q reported twice with different values", key)
}
