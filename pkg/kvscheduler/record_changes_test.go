package kvscheduler_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestChangedStatusesAreTheTransactionsStatusChanges: a transaction's
// record lists the statuses it changed, as published after it: the value
// it created, the dependent it left PENDING, then, in a later one, the
// dependent it created, and the value it removed as REMOVED.
func TestChangedStatusesAreTheTransactionsStatusChanges(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sb := kvtest.New()
	routes := sb.Descriptor("route", "route/")
	routes.Dependencies = func(string, any) []kvscheduler.Dependency { return []kvscheduler.Dependency{{Key: "link/b"}} }
	for _, d := range []*kvscheduler.Descriptor{sb.Descriptor("link", "link/"), routes} {
		if err := s.RegisterDescriptor(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	states := func(rec *kvscheduler.TxnRecord) string {
		out := ""
		for _, st := range rec.ChangedStatuses() {
			out += fmt.Sprintf("%s=%s ", st.Key, st.State)
		}
		return out
	}
	rec, err := s.StartNBTransaction().SetValue("link/a", "up").SetValue("route/r", "via b").Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := states(rec); got != "link/a=CONFIGURED route/r=PENDING " {
		t.Errorf("first transaction changed %q", got)
	}
	if _, err := s.StartNBTransaction().SetValue("link/b", "up").SetValue("link/a", nil).Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	recs := s.TransactionHistory(time.Time{}, time.Time{})
	got := map[string]string{}
	for _, st := range recs[len(recs)-1].ChangedStatuses() {
		got[st.Key] = st.State.String()
	}
	want := map[string]string{"link/a": "REMOVED", "link/b": "CONFIGURED", "route/r": "CONFIGURED"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("second transaction changed %v, want %v", got, want)
	}
}
