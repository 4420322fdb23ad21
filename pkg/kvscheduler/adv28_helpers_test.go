package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// adv28Harness is a scheduler over the in-memory southbound with the adv5
// fuzz's descriptors: a/ and r/ values name their dependencies in their
// text (fzParse; r/ updates by re-creation), b/ values derive d/<n> for
// each @<n> of their tag, and d/ values depend, with dd, on the exact keys
// their text names (fzHeldDeps with -fzdd).
type adv28Harness struct {
	s  *kvscheduler.Scheduler
	sb *kvtest.Southbound
}

// newAdv28Harness builds the harness; dd gives d/ values dependencies.
func newAdv28Harness(t *testing.T, dd bool) *adv28Harness {
	t.Helper()
	return newAdv28HarnessRB(t, dd, false)
}

// newAdv28HarnessRB is newAdv28Harness where, with rb, a b/ value is
// updated by re-creation too (the fuzz's -fzrb).
func newAdv28HarnessRB(t *testing.T, dd, rb bool) *adv28Harness {
	t.Helper()
	return newAdv28HarnessWith(t, dd, rb, false)
}

// newAdv28HarnessWith is newAdv28HarnessRB where, with drc, a d/ value is
// updated by re-creation (its base's update that changes it deletes it
// and creates it again).
func newAdv28HarnessWith(t *testing.T, dd, rb, drc bool) *adv28Harness {
	t.Helper()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	h := &adv28Harness{s: s, sb: kvtest.New()}
	deps := func(_ string, v any) []kvscheduler.Dependency { _, d := fzParse(v); return d }
	a := h.sb.Descriptor("a", "a/")
	a.Dependencies = deps
	r := h.sb.Descriptor("r", "r/")
	r.Dependencies = deps
	r.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	b := h.sb.Descriptor("b", "b/")
	b.Dependencies = deps
	if rb {
		b.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	}
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		tag, _ := fzParse(v)
		var out []kvscheduler.KeyValuePair
		for _, part := range strings.Split(tag, "@")[1:] {
			out = append(out, kvscheduler.KeyValuePair{Key: "d/" + part, Value: "dv-" + v.(string)})
		}
		return out
	}
	d := h.sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	if drc {
		d.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	}
	if dd {
		d.Dependencies = func(k string, v any) []kvscheduler.Dependency {
			_, ds := fzParse(v)
			var out []kvscheduler.Dependency
			for _, x := range ds {
				if x.Key != "" && x.Key != k {
					out = append(out, x)
				}
			}
			return out
		}
	}
	for _, desc := range []*kvscheduler.Descriptor{a, r, b, d} {
		if err := s.RegisterDescriptor(context.Background(), desc); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// commit applies kvs (key, value; "" deletes) as one transaction, with
// revert if revert is set, and returns its error.
func (h *adv28Harness) commit(revert bool, kvs ...string) error {
	txn := h.s.StartNBTransaction()
	for i := 0; i+1 < len(kvs); i += 2 {
		var v any
		if kvs[i+1] != "" {
			v = kvs[i+1]
		}
		txn.SetValue(kvs[i], v)
	}
	if revert {
		txn.WithRevert()
	}
	_, err := txn.Commit(context.Background())
	return err
}
