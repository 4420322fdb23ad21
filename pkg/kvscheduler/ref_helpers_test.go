package kvscheduler_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Helpers of the ports of the reference's scenario tests (ref_*_test.go):
// ligato/vpp-agent's plugins/kvscheduler/{datachange,resync,notification}_test.go,
// re-expressed on Lariat's public API and kvtest's southbound.
//
// The reference's values are arrays of items ("item1,item2", optionally
// with a suffix after "#" appended to every derived value, as its
// ArrayValue.ItemSuffix); an array "<prefix><base>" derives
// "<prefix><base>/<item>" for each item, keys its own descriptor claims,
// as the reference's mock descriptors (test.ArrayValueDerBuilder) do.
// A value starting with "=" is a plain string (the reference's
// StringValue), which derives nothing.

// refItems derives the items of an array value (see above).
func refItems(key string, v any) []kvscheduler.KeyValuePair {
	if strings.Count(key, "/") > 1 || strings.HasPrefix(v.(string), "=") {
		return nil // items, and plain strings ("=..."), derive nothing
	}
	items, suffix, _ := strings.Cut(v.(string), "#")
	var out []kvscheduler.KeyValuePair
	for _, item := range strings.Split(items, ",") {
		if item != "" {
			out = append(out, kvscheduler.KeyValuePair{Key: key + "/" + item, Value: item + suffix})
		}
	}
	return out
}

// refDescriptor is the reference's mock descriptor over its mock
// southbound: array values deriving their items, metadata, and a Retrieve
// that returns base values only (the reference's mock southbound skips
// the keys it knows as derived; Lariat's contract is the same).
// RetrieveKeys is dropped: the reference has no scoped reads.
func refDescriptor(sb *kvtest.Southbound, name, prefix string) *kvscheduler.Descriptor {
	d := sb.Descriptor(name, prefix)
	d.DerivedValues = refItems
	d.RetrieveKeys = nil
	retrieve := d.Retrieve
	d.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		all, err := retrieve(ctx, c)
		var out []kvscheduler.KVWithMetadata
		for _, kv := range all {
			if strings.Count(kv.Key, "/") == 1 {
				out = append(out, kv)
			}
		}
		return out, err
	}
	return d
}

// refDeps returns a Dependencies callback giving each listed key exact
// dependencies on the listed keys.
func refDeps(deps map[string][]string) func(string, any) []kvscheduler.Dependency {
	return func(key string, _ any) []kvscheduler.Dependency {
		var out []kvscheduler.Dependency
		for _, k := range deps[key] {
			out = append(out, kvscheduler.Dependency{Label: k, Key: k})
		}
		return out
	}
}

// refOp formats one recorded operation the way the reference's
// checkTxnOperation compares it: operation, key, values, states, errors
// and flags.
func refOp(op kvscheduler.RecordedOp) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", op.Operation, op.Key)
	switch op.Operation {
	case kvscheduler.OpDelete:
		fmt.Fprintf(&b, " =%v", op.PrevValue)
	case kvscheduler.OpUpdate:
		fmt.Fprintf(&b, " =%v=>%v", op.PrevValue, op.NewValue)
	default:
		fmt.Fprintf(&b, " =%v", op.NewValue)
	}
	fmt.Fprintf(&b, " %s->%s", op.PrevState, op.NewState)
	for _, f := range []struct {
		on   bool
		name string
	}{{op.Derived, "derived"}, {op.Property, "property"}, {op.NOOP, "noop"}, {op.Recreate, "recreate"},
		{op.Revert, "revert"}, {op.Retry, "retry"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	if op.PrevErr != nil {
		fmt.Fprintf(&b, " preverr=%q", op.PrevErr.Error())
	}
	if op.Err != nil {
		fmt.Fprintf(&b, " err=%q", op.Err.Error())
	}
	return b.String()
}

// wantRefRecord checks the executed operations of a record, one line per
// operation (see refOp).
func wantRefRecord(t *testing.T, rec *kvscheduler.TxnRecord, want ...string) {
	t.Helper()
	if rec == nil {
		t.Errorf("no record, want operations %q", want)
		return
	}
	var got []string
	for _, op := range rec.Executed {
		got = append(got, refOp(op))
	}
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("transaction #%d executed:\n got  %s\n want %s", rec.SeqNum,
			strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// wantRefHeader checks what the reference checks of a record besides its
// operations: sequence number, type, resync type, description and the
// values (key=value, sorted by key: the reference's checkRecordedValues
// ignores their order).
func wantRefHeader(t *testing.T, rec *kvscheduler.TxnRecord, seq uint64, typ kvscheduler.TxnType,
	rs kvscheduler.ResyncType, desc string, values ...string) {
	t.Helper()
	if rec == nil {
		t.Errorf("no record, want transaction #%d", seq)
		return
	}
	var got []string
	for _, kv := range rec.Values {
		got = append(got, fmt.Sprintf("%s=%v", kv.Key, kv.Value))
	}
	sort.Strings(got) // the reference finds them by key, in any order
	if rec.SeqNum != seq || rec.Type != typ || rec.Resync != rs || rec.Description != desc ||
		!reflect.DeepEqual(got, values) && !(len(got) == 0 && len(values) == 0) {
		t.Errorf("transaction #%d (%s, %s resync, %q) values %q, want #%d (%s, %s resync, %q) values %q",
			rec.SeqNum, rec.Type, rec.Resync, rec.Description, got, seq, typ, rs, desc, values)
	}
	if !rec.Start.Before(rec.Stop) && !rec.Start.Equal(rec.Stop) {
		t.Errorf("transaction #%d started %v after it stopped %v", rec.SeqNum, rec.Start, rec.Stop)
	}
}

// lastRecord returns the newest recorded transaction.
func lastRecord(t *testing.T, s *kvscheduler.Scheduler) *kvscheduler.TxnRecord {
	t.Helper()
	h := s.TransactionHistory(time.Time{}, time.Time{})
	if len(h) == 0 {
		t.Fatal("no transaction recorded")
	}
	return h[len(h)-1]
}

// wantStatus checks a value's state, last operation and unmet
// dependencies (the reference's ValueStatus State, LastOperation and
// Details of a PENDING value).
func wantStatus(t *testing.T, s *kvscheduler.Scheduler, key string, state kvscheduler.ValueState,
	lastOp kvscheduler.Operation, unmet ...string) {
	t.Helper()
	st := s.GetValueStatus(key)
	if st.State != state || st.LastOp != lastOp ||
		!reflect.DeepEqual(st.UnmetDependencies, unmet) && !(len(st.UnmetDependencies) == 0 && len(unmet) == 0) {
		t.Errorf("%s: %s (last op %s, unmet %v, error %v), want %s (last op %s, unmet %v)",
			key, st.State, st.LastOp, st.UnmetDependencies, st.Error, state, lastOp, unmet)
	}
}

// wantStatusErr checks a value's state, last operation and error text.
func wantStatusErr(t *testing.T, s *kvscheduler.Scheduler, key string, state kvscheduler.ValueState,
	lastOp kvscheduler.Operation, errText string) {
	t.Helper()
	st := s.GetValueStatus(key)
	got := ""
	if st.Error != nil {
		got = st.Error.Error()
	}
	if st.State != state || st.LastOp != lastOp || got != errText {
		t.Errorf("%s: %s (last op %s, error %q), want %s (last op %s, error %q)",
			key, st.State, st.LastOp, got, state, lastOp, errText)
	}
}

// wantBaseDump checks the base values DumpValues returns for a descriptor
// in a view, as "key=value origin" sorted by key, each with metadata when
// withMD. Derived values are left out: the reference's dumps by
// descriptor list base values only, Lariat's list the derived values too
// (a deviation, docs/kvscheduler.md).
func wantBaseDump(t *testing.T, s *kvscheduler.Scheduler, desc string, view kvscheduler.View, withMD bool, want ...string) {
	t.Helper()
	var got []string
	for _, kv := range s.DumpValues(desc, "", view) {
		if s.GetValueStatus(kv.Key).Derived {
			continue
		}
		got = append(got, fmt.Sprintf("%s=%v %s", kv.Key, kv.Value, refOrigin(kv.Origin)))
		if withMD && kv.Metadata == nil {
			t.Errorf("%s view of %s: %s has no metadata", view, desc, kv.Key)
		}
	}
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("%s view of %s: %q, want %q", view, desc, got, want)
	}
}

func refOrigin(o kvscheduler.Origin) string {
	switch o {
	case kvscheduler.FromNB:
		return "NB"
	case kvscheduler.FromSB:
		return "SB"
	}
	return "unknown"
}

// metadataOf returns the metadata the descriptor's map holds for label.
func metadataOf(t *testing.T, s *kvscheduler.Scheduler, desc, label string) any {
	t.Helper()
	m, ok := s.MetadataMap(desc)
	if !ok {
		t.Fatalf("descriptor %s has no metadata map", desc)
	}
	md, ok := m.Get(label)
	if !ok {
		t.Errorf("descriptor %s: no metadata for %s", desc, label)
	}
	return md
}

// wantOpsWithReads is wantOps counting the reads: a read is "retrieve
// <descriptor>" (kvtest's Retrieve; RetrieveKeys reads name the key).
func wantOpsWithReads(t *testing.T, sb *kvtest.Southbound, want ...string) {
	t.Helper()
	var got []string
	for _, o := range sb.Ops(true) {
		got = append(got, o.String())
	}
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("ops:\n got  %s\n want %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	sb.ResetOps()
}

// afterFailure makes the next failure of d's operation ("create",
// "update" or "delete") on key call then once the southbound has failed,
// as the reference's planned errors with a callback do (to change what
// the southbound holds after the error).
func afterFailure(d *kvscheduler.Descriptor, operation, key string, then func()) {
	done := false
	after := func(k string, err error) error {
		if err != nil && k == key && !done {
			done = true
			then()
		}
		return err
	}
	switch operation {
	case "create":
		create := d.Create
		d.Create = func(ctx context.Context, k string, v any) (any, error) {
			md, err := create(ctx, k, v)
			return md, after(k, err)
		}
	case "update":
		update := d.Update
		d.Update = func(ctx context.Context, k string, old, v any, md any) (any, error) {
			md, err := update(ctx, k, old, v, md)
			return md, after(k, err)
		}
	case "delete":
		del := d.Delete
		d.Delete = func(ctx context.Context, k string, v any, md any) error {
			return after(k, del(ctx, k, v, md))
		}
	}
}

// correlated records the correlate argument of each of d's Retrieve calls
// as "key=value" lists ("+md" when it carries metadata).
func correlated(d *kvscheduler.Descriptor) *[][]string {
	var calls [][]string
	retrieve := d.Retrieve
	d.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		var call []string
		for _, kv := range c {
			s := fmt.Sprintf("%s=%v", kv.Key, kv.Value)
			if kv.Metadata != nil {
				s += "+md"
			}
			call = append(call, s)
		}
		sort.Strings(call)
		calls = append(calls, call)
		return retrieve(ctx, c)
	}
	return &calls
}

// wantPendingAfterCreate checks a value left PENDING by its create, with
// its unmet dependencies; its last operation is that CREATE.
func wantPendingAfterCreate(t *testing.T, s *kvscheduler.Scheduler, key string, unmet ...string) {
	t.Helper()
	wantStatus(t, s, key, kvscheduler.Pending, kvscheduler.OpCreate, unmet...)
}

// awaitStatus waits until the watch delivers the status of key in state.
func awaitStatus(t *testing.T, w *kvscheduler.Watch, key string, state kvscheduler.ValueState) kvscheduler.ValueStatus {
	t.Helper()
	var got kvscheduler.ValueStatus
	eventually(t, key+" reported "+state.String(), func() bool {
		for {
			select {
			case st := <-w.C():
				if st.Key == key && st.State == state {
					got = st
					return true
				}
			default:
				return false
			}
		}
	})
	return got
}
