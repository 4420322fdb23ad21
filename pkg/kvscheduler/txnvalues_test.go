package kvscheduler

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestSortTxnValuesPermutes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		vs := make([]txnValue, n)
		for i := range vs {
			vs[i] = txnValue{key: "k/" + strconv.Itoa(r.IntN(1000000)) + "/" + strconv.Itoa(i), value: i, group: uint8(r.IntN(4))}
		}
		want := slices.Clone(vs)
		slices.SortFunc(want, func(a, b txnValue) int {
			if a.group != b.group {
				return int(a.group) - int(b.group)
			}
			return strings.Compare(a.key, b.key)
		})
		sortTxnValues(vs)
		for i := range vs {
			if vs[i].key != want[i].key || vs[i].value != want[i].value {
				t.Fatalf("n=%d: at %d got %s, want %s", n, i, vs[i].key, want[i].key)
			}
		}
	}
}
