package kvscheduler_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

func TestDependencyStatuses(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("b", "b/"), withDeps(sb.Descriptor("c", "c/")), withDeps(sb.Descriptor("a", "a/")))
	mustSet(t, s, "b/1", "x", "a/1", "v|b/1,c/*,b/2")
	st := wantState(t, s, "a/1", kvscheduler.Pending)
	want := []kvscheduler.DependencyStatus{
		{Label: "b/1", Key: "b/1", Keys: []string{"b/1"}, Met: true},
		{Label: "c/*"},
		{Label: "b/2", Key: "b/2", Keys: []string{"b/2"}},
	}
	if !reflect.DeepEqual(st.Dependencies, want) {
		t.Fatalf("dependencies of pending value:\n got  %+v\n want %+v", st.Dependencies, want)
	}
	if !reflect.DeepEqual(st.UnmetDependencies, []string{"c/*", "b/2"}) {
		t.Fatalf("unmet %v", st.UnmetDependencies)
	}
	// Any-of dependencies list every matching key, sorted.
	mustSet(t, s, "c/2", "y", "c/1", "y", "b/2", "z")
	st = wantState(t, s, "a/1", kvscheduler.Configured)
	want = []kvscheduler.DependencyStatus{
		{Label: "b/1", Key: "b/1", Keys: []string{"b/1"}, Met: true},
		{Label: "c/*", Keys: []string{"c/1", "c/2"}, Met: true},
		{Label: "b/2", Key: "b/2", Keys: []string{"b/2"}, Met: true},
	}
	if !reflect.DeepEqual(st.Dependencies, want) || st.UnmetDependencies != nil {
		t.Fatalf("dependencies of configured value:\n got  %+v\n want %+v", st.Dependencies, want)
	}
	if st := s.GetValueStatus("b/1"); st.Dependencies != nil {
		t.Fatalf("value without dependencies: %+v", st.Dependencies)
	}
	mustSet(t, s, "c/1", nil, "c/2", nil)
	st = wantState(t, s, "a/1", kvscheduler.Pending)
	if d := st.Dependencies[1]; d.Met || d.Keys != nil {
		t.Fatalf("any-of without match: %+v", d)
	}
	// A pending match would satisfy the dependency: it is listed.
	mustSet(t, s, "c/3", "y|d/1")
	st = wantState(t, s, "a/1", kvscheduler.Pending)
	if d := st.Dependencies[1]; d.Met || !reflect.DeepEqual(d.Keys, []string{"c/3"}) {
		t.Fatalf("any-of with a pending match: %+v", d)
	}
}

func TestDerivedBaseKey(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	ifd := sb.Descriptor("if", "if/")
	ifd.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		name := strings.TrimPrefix(key, "if/")
		return []kvscheduler.KeyValuePair{{Key: "addr/" + name, Value: v}, {Key: "prop/up/" + name, Value: true}}
	}
	register(t, s, ifd, withDeps(sb.Descriptor("addr", "addr/")))
	mustSet(t, s, "if/a", "x|dep/1")
	// The derived value depends on dep/1 too (its value is the base's),
	// and names its base; the base dependency is not a declared one.
	st := wantState(t, s, "addr/a", kvscheduler.Pending)
	if st.BaseKey != "if/a" || !st.Derived || len(st.Dependencies) != 1 || st.Dependencies[0].Key != "dep/1" {
		t.Fatalf("pending derived value: %+v", st)
	}
	if st := wantState(t, s, "prop/up/a", kvscheduler.Configured); st.BaseKey != "if/a" || st.Dependencies != nil {
		t.Fatalf("property: %+v", st)
	}
	// The cached view shows the pending derived value, which neither the
	// northbound requested nor the southbound has; the property exists
	// with its base.
	cached := s.DumpValues("", "", kvscheduler.CachedView)
	if kv := findKV(t, cached, "addr/a"); kv.Value != "x|dep/1" || kv.Origin != kvscheduler.FromNB {
		t.Fatalf("cached pending derived value: %+v", kv)
	}
	if got := kvKeys(s.DumpValues("addr", "", kvscheduler.CachedView)); !reflect.DeepEqual(got, []string{"addr/a"}) {
		t.Fatalf("cached addr values: %v", got)
	}
	if got := kvKeys(s.DumpValues("", "", kvscheduler.SBView)); !reflect.DeepEqual(got, []string{"if/a", "prop/up/a"}) {
		t.Fatalf("SB view: %v", got)
	}
	if got := kvKeys(s.DumpValues("", "", kvscheduler.NBView)); !reflect.DeepEqual(got, []string{"if/a"}) {
		t.Fatalf("NB view: %v", got)
	}
	if st := wantState(t, s, "if/a", kvscheduler.Configured); st.BaseKey != "" || st.Derived {
		t.Fatalf("base: %+v", st)
	}
	mustSet(t, s, "if/a", "y")
	if st := wantState(t, s, "addr/a", kvscheduler.Configured); st.BaseKey != "if/a" || st.Dependencies != nil {
		t.Fatalf("configured derived value: %+v", st)
	}
}

func kvKeys(kvs []kvscheduler.KVWithMetadata) []string {
	var out []string
	for _, kv := range kvs {
		out = append(out, kv.Key)
	}
	return out
}

func findKV(t *testing.T, kvs []kvscheduler.KVWithMetadata, key string) kvscheduler.KVWithMetadata {
	t.Helper()
	for _, kv := range kvs {
		if kv.Key == key {
			return kv
		}
	}
	t.Fatalf("%s not in %v", key, kvKeys(kvs))
	return kvscheduler.KVWithMetadata{}
}

func TestDumpValues(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("link", "link/"), withDeps(sb.Descriptor("route", "route/")))
	if got := s.DumpValues("", "", kvscheduler.CachedView); len(got) != 0 {
		t.Fatalf("empty scheduler: %v", got)
	}
	sb.Set("link/sb", "owned", true)
	sb.Set("link/stray", "left", false)
	mustSet(t, s, "link/eth0", "up", "route/r1", "r|link/eth0", "route/r2", "r|link/eth9", "other/1", "x")

	nb := s.DumpValues("", "", kvscheduler.NBView)
	if !reflect.DeepEqual(kvKeys(nb), []string{"link/eth0", "other/1", "route/r1", "route/r2"}) {
		t.Fatalf("NB view: %v", kvKeys(nb))
	}
	if kv := findKV(t, nb, "route/r2"); kv.Value != "r|link/eth9" || kv.Origin != kvscheduler.FromNB {
		t.Fatalf("NB pending value: %+v", kv)
	}
	// The southbound has not been retrieved yet: only what the scheduler
	// created is known there.
	if sbv := s.DumpValues("", "", kvscheduler.SBView); !reflect.DeepEqual(kvKeys(sbv), []string{"link/eth0", "route/r1"}) {
		t.Fatalf("SB view before resync: %v", kvKeys(sbv))
	}
	// A downstream resync retrieves the southbound: the owned value is
	// OBTAINED, the stray one removed.
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, "link/sb", kvscheduler.Obtained)
	sbv := s.DumpValues("", "", kvscheduler.SBView)
	if !reflect.DeepEqual(kvKeys(sbv), []string{"link/eth0", "link/sb", "route/r1"}) {
		t.Fatalf("SB view after resync: %v", kvKeys(sbv))
	}
	if kv := findKV(t, sbv, "link/sb"); kv.Value != "owned" || kv.Origin != kvscheduler.FromSB || kv.Metadata == nil {
		t.Fatalf("obtained value: %+v", kv)
	}
	mm, _ := s.MetadataMap("link")
	md, _ := mm.Get("eth0")
	if kv := findKV(t, sbv, "link/eth0"); kv.Value != "up" || kv.Origin != kvscheduler.FromNB || kv.Metadata != md {
		t.Fatalf("configured value: %+v (metadata map %v)", kv, md)
	}

	// The cached view holds every value with a status: pending and
	// unimplemented ones as requested.
	cached := s.DumpValues("", "", kvscheduler.CachedView)
	if !reflect.DeepEqual(kvKeys(cached), []string{"link/eth0", "link/sb", "other/1", "route/r1", "route/r2"}) {
		t.Fatalf("cached view: %v", kvKeys(cached))
	}
	if kv := findKV(t, cached, "route/r2"); kv.Value != "r|link/eth9" || kv.Metadata != nil {
		t.Fatalf("cached pending value: %+v", kv)
	}
	if kv := findKV(t, cached, "link/eth0"); kv.Metadata != md {
		t.Fatalf("cached configured value: %+v", kv)
	}

	checkDumpFilters(t, s)

	// A failed update leaves the old value in the southbound and the new
	// one requested.
	sb.FailNext("update", "link/eth0", errors.New("boom"))
	if err := set(t, s, "link/eth0", "down"); err == nil {
		t.Fatal("update did not fail")
	}
	if kv := findKV(t, s.DumpValues("", "link/eth0", kvscheduler.NBView), "link/eth0"); kv.Value != "down" {
		t.Fatalf("NB after failed update: %+v", kv)
	}
	if kv := findKV(t, s.DumpValues("", "link/eth0", kvscheduler.SBView), "link/eth0"); kv.Value != "up" {
		t.Fatalf("SB after failed update: %+v", kv)
	}
	if kv := findKV(t, s.DumpValues("", "link/eth0", kvscheduler.CachedView), "link/eth0"); kv.Value != "up" {
		t.Fatalf("cached after failed update: %+v", kv)
	}

}

// checkDumpFilters checks DumpValues' filters on TestDumpValues' values.
func checkDumpFilters(t *testing.T, s *kvscheduler.Scheduler) {
	t.Helper()
	if got := kvKeys(s.DumpValues("route", "", kvscheduler.CachedView)); !reflect.DeepEqual(got, []string{"route/r1", "route/r2"}) {
		t.Fatalf("route descriptor: %v", got)
	}
	if got := kvKeys(s.DumpValues("route", "route/r2", kvscheduler.NBView)); !reflect.DeepEqual(got, []string{"route/r2"}) {
		t.Fatalf("route descriptor and prefix: %v", got)
	}
	if got := kvKeys(s.DumpValues("", "link/", kvscheduler.SBView)); !reflect.DeepEqual(got, []string{"link/eth0", "link/sb"}) {
		t.Fatalf("link prefix: %v", got)
	}
	if got := s.DumpValues("", "", kvscheduler.View(42)); got != nil {
		t.Fatalf("unknown view: %v", got)
	}
}

func TestViewString(t *testing.T) {
	for v, name := range map[kvscheduler.View]string{kvscheduler.CachedView: "cached", kvscheduler.NBView: "NB",
		kvscheduler.SBView: "SB", kvscheduler.View(7): "View(7)"} {
		if v.String() != name {
			t.Errorf("%d: %q", int(v), v.String())
		}
	}
}

// TestSelectorIndexFollowsNodesAndValues: the keys a selector dependency
// matches are indexed when the dependency is computed and kept up to date
// as values come and go; a new value of the dependent, with a new
// selector, is matched afresh (not against the old selector's keys).
func TestSelectorIndexFollowsNodesAndValues(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b := sb.Descriptor("b", "b/")
	b.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
		want := "a/" + strings.TrimPrefix(v.(string), "on ") // "on 1" needs a/1
		return []kvscheduler.Dependency{{Label: want, AnyOf: kvscheduler.AnyOfDependency{
			KeySelector: func(k string) bool { return k == want }}}}
	}
	register(t, s, sb.Descriptor("a", "a/"), b)
	mustSet(t, s, "a/1", "x", "b/1", "on 1")
	wantState(t, s, "b/1", kvscheduler.Configured)
	// The provider goes (its node leaves the graph) and comes back.
	mustSet(t, s, "a/1", nil)
	wantState(t, s, "b/1", kvscheduler.Pending)
	mustSet(t, s, "a/1", "y")
	wantState(t, s, "b/1", kvscheduler.Configured)
	// A new value needs a/2, which does not exist: a/1 no longer counts.
	mustSet(t, s, "b/1", "on 2")
	if st := wantState(t, s, "b/1", kvscheduler.Pending); len(st.Dependencies) != 1 || st.Dependencies[0].Met ||
		len(st.Dependencies[0].Keys) != 0 {
		t.Fatalf("dependencies %+v", st.Dependencies)
	}
	mustSet(t, s, "a/2", "z")
	if st := wantState(t, s, "b/1", kvscheduler.Configured); !reflect.DeepEqual(st.Dependencies[0].Keys, []string{"a/2"}) {
		t.Fatalf("dependencies %+v", st.Dependencies)
	}
	// Its provider deleted, b/1 goes first.
	sb.ResetOps()
	mustSet(t, s, "a/2", nil)
	wantOps(t, sb, "delete b/1", "delete a/2")
	wantState(t, s, "b/1", kvscheduler.Pending)
}
