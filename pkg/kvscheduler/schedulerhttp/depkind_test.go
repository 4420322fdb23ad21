package schedulerhttp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

// TestDependencyKindIsShown: the status and the graph say which of a
// value's dependencies are ordering only and which it requires, met or
// not.
func TestDependencyKindIsShown(t *testing.T) {
	s, sb := newScheduler(t)
	app := sb.Descriptor("app", "app/")
	app.Dependencies = func(string, any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{
			{Key: "db/1"}, // requires, met
			{Key: "cfg/1", Kind: kvscheduler.OrderingOnly},  // ordering only, met
			{Key: "late/1", Kind: kvscheduler.OrderingOnly}, // ordering only, unmet
		}
	}
	register(t, s, app, sb.Descriptor("db", "db/"), sb.Descriptor("cfg", "cfg/"))
	if _, err := s.StartNBTransaction().SetValue("db/1", "d").SetValue("cfg/1", "c").SetValue("app/1", "a").
		Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	f := serve(t, s, sb)
	var st schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=app/1", 200, &st)
	kinds := map[string]string{}
	for _, d := range st.Dependencies {
		kinds[d.Key] = d.Kind
	}
	want := map[string]string{"db/1": "requires", "cfg/1": "ordering-only", "late/1": "ordering-only"}
	for k, v := range want {
		if kinds[k] != v {
			t.Errorf("dependency on %s: kind %q, want %q (status %+v)", k, kinds[k], v, st.Dependencies)
		}
	}

	_, _, body := f.do(t, "GET", "/scheduler/graph?format=dot")
	dot := string(body)
	for _, line := range []string{
		`"app/1" -> "db/1";`,
		`"app/1" -> "cfg/1" [arrowhead=empty];`,
		`"app/1" -> "late/1" [style=dashed, color=red, label="unmet ordering-only", arrowhead=empty];`,
	} {
		if !strings.Contains(dot, line) {
			t.Errorf("the graph lacks %s:\n%s", line, dot)
		}
	}
}
