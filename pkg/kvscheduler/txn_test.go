package kvscheduler_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestLaterSetValueWins sets keys again in every order a transaction may
// be built in: ascending and descending runs (which SetValue follows
// without an index), the same key twice in a row, and a run broken by a
// key set before. Each key gets its last value, once.
func TestLaterSetValueWins(t *testing.T) {
	for name, seq := range map[string][]string{
		"ascending, last again":      {"a/1", "a/2", "a/3", "a/3"},
		"descending, last again":     {"a/3", "a/2", "a/1", "a/1"},
		"ascending, then an earlier": {"a/1", "a/2", "a/3", "a/1"},
		"descending, then earlier":   {"a/3", "a/2", "a/1", "a/2", "a/3"},
		"mixed":                      {"a/2", "a/1", "a/3", "a/2", "a/1"},
		"one key":                    {"a/1", "a/1", "a/1"},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSched(t, kvscheduler.Options{})
			sb := kvtest.New()
			register(t, s, sb.Descriptor("a", "a/"))
			txn := s.StartNBTransaction()
			want := map[string]any{}
			for i, k := range seq {
				txn.SetValue(k, i)
				want[k] = i
			}
			rec, err := txn.Commit(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Values) != len(want) {
				t.Errorf("the record lists %d values, want %d: %v", len(rec.Values), len(want), rec.Values)
			}
			wantSB(t, sb, want)
			got := map[string]any{}
			for _, kv := range s.DumpValues("", "", kvscheduler.NBView) {
				got[kv.Key] = kv.Value
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("NB view %v, want %v", got, want)
			}
		})
	}
}
