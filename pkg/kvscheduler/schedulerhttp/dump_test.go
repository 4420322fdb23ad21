package schedulerhttp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

func TestDump(t *testing.T) {
	f := newFixture(t)
	var d schedulerhttp.DumpView
	f.getJSON(t, "GET", "/scheduler/dump", 200, &d)
	if d.View != "cached" || len(d.Values) != 3 {
		t.Fatalf("dump = %+v", d)
	}
	if v := d.Values[0]; v.Key != "link/eth0" || string(mustJSON(t, v.Value)) != `"up"` || v.ValueSeqNum == nil || *v.ValueSeqNum != 0 {
		t.Errorf("link = %+v", v)
	}
	// The cached view holds a pending value as it waits to be created.
	if v := d.Values[2]; v.Key != "route/r2" || string(mustJSON(t, v.Value)) != `"eth9"` || v.State != "PENDING" ||
		len(v.WaitingFor) != 1 || v.Origin != "NB" || v.Metadata != nil || v.ValueSeqNum != nil {
		t.Errorf("pending route = %+v", v)
	}
	if v := d.Values[0]; v.Origin != "NB" || string(mustJSON(t, v.Metadata)) != "1" {
		t.Errorf("link metadata = %+v", v)
	}
	if deps := d.Values[1].Dependencies; len(deps) != 1 || deps[0].Key != "link/eth0" || !deps[0].Met {
		t.Errorf("route/r1 dependencies = %+v", deps)
	}
	f.getJSON(t, "GET", "/scheduler/dump?key-prefix=route/&view=internal", 200, &d)
	if len(d.Values) != 2 || d.Metadata != nil {
		t.Errorf("routes = %+v", d)
	}
	f.getJSON(t, "GET", "/scheduler/dump?descriptor=link", 200, &d)
	if len(d.Values) != 1 || d.Values[0].Key != "link/eth0" || len(d.Metadata) != 1 || d.Metadata["eth0"] == nil {
		t.Errorf("links = %+v", d)
	}
	f.wantError(t, "GET", "/scheduler/dump?view=x", 400, "view")

	// The southbound owns link/eth1; the northbound changes link/eth0,
	// which fails, so the views differ.
	f.sb.Set("link/eth1", "sb", true)
	if _, err := f.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.sb.FailNext("update", "link/eth0", errors.New("boom"))
	if _, err := f.s.StartNBTransaction().SetValue("link/eth0", "down").Commit(t.Context()); err == nil {
		t.Fatal("update did not fail")
	}
	values := func(d schedulerhttp.DumpView) string {
		var b strings.Builder
		for _, v := range d.Values {
			b.WriteString(v.Key + "=" + string(mustJSON(t, v.Value)) + "/" + v.Origin + "/" + v.State + " ")
		}
		return b.String()
	}
	f.getJSON(t, "GET", "/scheduler/dump?view=nb&descriptor=link", 200, &d)
	if got := values(d); d.View != "NB" || got != `link/eth0="down"/NB/FAILED ` || d.Metadata == nil {
		t.Errorf("NB view = %s (%+v)", got, d)
	}
	f.getJSON(t, "GET", "/scheduler/dump?view=SB&key-prefix=link/", 200, &d)
	if got := values(d); d.View != "SB" || got != `link/eth0="up"/NB/FAILED link/eth1="sb"/SB/OBTAINED ` {
		t.Errorf("SB view = %s", got)
	}
	if d.Values[1].Metadata == nil {
		t.Errorf("obtained value without metadata: %+v", d.Values[1])
	}
	f.getJSON(t, "GET", "/scheduler/dump?key-prefix=link/", 200, &d)
	if got := values(d); d.View != "cached" || got != `link/eth0="up"/NB/FAILED link/eth1="sb"/SB/OBTAINED ` {
		t.Errorf("cached view = %s", got)
	}
	f.getJSON(t, "GET", "/scheduler/dump?view=SB&key-prefix=route/r2", 200, &d)
	if len(d.Values) != 0 {
		t.Errorf("pending value in SB view: %+v", d)
	}
}
