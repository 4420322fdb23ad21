package kvscheduler_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

func newSched(t testing.TB, opts kvscheduler.Options) *kvscheduler.Scheduler {
	t.Helper()
	s, err := kvscheduler.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func register(t testing.TB, s *kvscheduler.Scheduler, ds ...*kvscheduler.Descriptor) {
	t.Helper()
	for _, d := range ds {
		if err := s.RegisterDescriptor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
}

// set commits key/value pairs (value nil deletes) as one blocking transaction.
func set(t testing.TB, s *kvscheduler.Scheduler, kvs ...any) error {
	t.Helper()
	txn := s.StartNBTransaction()
	for i := 0; i+1 < len(kvs); i += 2 {
		txn.SetValue(kvs[i].(string), kvs[i+1])
	}
	_, err := txn.Commit(context.Background())
	return err
}

func mustSet(t testing.TB, s *kvscheduler.Scheduler, kvs ...any) {
	t.Helper()
	if err := set(t, s, kvs...); err != nil {
		t.Fatal(err)
	}
}

// wantInvalid checks that err is the *TransactionError of a commit that
// left exactly keys INVALID, and nothing else failed.
func wantInvalid(t testing.TB, err error, keys ...string) {
	t.Helper()
	var te *kvscheduler.TransactionError
	if !errors.As(err, &te) || len(te.Failed) > 0 {
		t.Fatalf("error %v, want one naming the invalid values %v", err, keys)
	}
	var got []string
	for _, ke := range te.Invalid {
		got = append(got, ke.Key)
	}
	if !reflect.DeepEqual(got, keys) || !te.OnlyFailedValues() {
		t.Fatalf("invalid %v, want %v (%v)", got, keys, err)
	}
}

// barrier waits until everything queued before it is processed.
func barrier(t testing.TB, s *kvscheduler.Scheduler) {
	t.Helper()
	mustSet(t, s)
}

func wantState(t testing.TB, s *kvscheduler.Scheduler, key string, want kvscheduler.ValueState) kvscheduler.ValueStatus {
	t.Helper()
	st := s.GetValueStatus(key)
	if st.State != want {
		t.Fatalf("%s: state %s, want %s (status %+v)", key, st.State, want, st)
	}
	return st
}

func wantOps(t testing.TB, sb *kvtest.Southbound, want ...string) {
	t.Helper()
	got := sb.OpStrings()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ops:\n got  %s\n want %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	sb.ResetOps()
}

func wantSB(t testing.TB, sb *kvtest.Southbound, want map[string]any) {
	t.Helper()
	if got := sb.Values(); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("southbound %v, want %v", got, want)
	}
}

// eventually polls cond; the deadline only guards against hangs.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// withDeps makes values of d depend on the keys listed in the value
// "name|dep1,dep2"; a dependency ending in "*" is any-of by prefix.
func withDeps(d *kvscheduler.Descriptor) *kvscheduler.Descriptor {
	d.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
		s, _ := v.(string)
		_, deps, ok := strings.Cut(s, "|")
		if !ok {
			return nil
		}
		var out []kvscheduler.Dependency
		for _, k := range strings.Split(deps, ",") {
			if k == "" {
				continue
			}
			if strings.HasSuffix(k, "*") {
				out = append(out, kvscheduler.Dependency{Label: k, AnyOf: kvscheduler.AnyOfDependency{KeyPrefixes: []string{strings.TrimSuffix(k, "*")}}})
				continue
			}
			out = append(out, kvscheduler.Dependency{Key: k})
		}
		return out
	}
	return d
}
