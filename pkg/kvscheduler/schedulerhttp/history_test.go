package schedulerhttp_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

func TestTxnHistory(t *testing.T) {
	f := newFixture(t)
	var all []schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history", 200, &all)
	if len(all) != 1 || all[0].SeqNum != 0 || all[0].Description != "setup" || len(all[0].Executed) != 3 {
		t.Fatalf("history = %+v", all)
	}
	if all[0].Executed[0].Operation != "CREATE" || all[0].Executed[0].NewState != "CONFIGURED" {
		t.Errorf("first op = %+v", all[0].Executed[0])
	}

	var one schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history?seq-num=0", 200, &one)
	if one.SeqNum != 0 || one.TxnType != "NB transaction" || len(one.Values) != 3 {
		t.Errorf("seq-num=0: %+v", one)
	}
	f.wantError(t, "GET", "/scheduler/txn-history?seq-num=99", 404, "#99")
	f.wantError(t, "GET", "/scheduler/txn-history?seq-num=x", 400, "seq-num")
	f.wantError(t, "GET", "/scheduler/txn-history?format=xml", 400, "format")
	f.wantError(t, "GET", "/scheduler/txn-history?since=a", 400, "since")
	if code, _, body := f.do(t, "HEAD", "/scheduler/txn-history"); code != 200 || body != "" {
		t.Errorf("HEAD: %d %q", code, body)
	}
	if code, _, body := f.do(t, "GET", "/scheduler/txn-history?format=TEXT"); code != 200 || !strings.Contains(body, "Transaction #0") {
		t.Errorf("text history: %d %q", code, body)
	}
	f.wantError(t, "GET", "/scheduler/txn-history?until=b", 400, "until")
	f.wantError(t, "GET", "/scheduler/txn-history?since=100&until=50", 400, "before")
	f.wantError(t, "DELETE", "/scheduler/txn-history", 405, "DELETE")

	now := time.Now().Unix()
	var win []schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history?since="+strconv.FormatInt(now+3600, 10), 200, &win)
	if len(win) != 0 {
		t.Errorf("future window: %+v", win)
	}
	f.getJSON(t, "GET", "/scheduler/txn-history?until="+strconv.FormatInt(now-3600, 10), 200, &win)
	if len(win) != 0 {
		t.Errorf("past window: %+v", win)
	}
	f.getJSON(t, "GET", "/scheduler/txn-history?since="+strconv.FormatInt(now-60, 10)+
		"&until="+strconv.FormatInt(now+60, 10), 200, &win)
	if len(win) != 1 {
		t.Errorf("current window: %+v", win)
	}

	code, hdr, body := f.do(t, "GET", "/scheduler/txn-history?format=text&seq-num=0")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("text: %d %v", code, hdr)
	}
	rec, _ := f.s.GetRecordedTransaction(0)
	if body != rec.String() || !strings.Contains(body, "Transaction #0") {
		t.Errorf("text log = %q", body)
	}
}

func TestTxnHistoryRanges(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 4 { // transactions #1 to #4 (#0 is the fixture's)
		if _, err := f.s.StartNBTransaction().SetValue("link/eth0", strconv.Itoa(i)).Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(query string) string {
		t.Helper()
		var recs []schedulerhttp.TxnJSON
		f.getJSON(t, "GET", "/scheduler/txn-history?"+query, 200, &recs)
		var out []string
		for _, r := range recs {
			out = append(out, strconv.FormatUint(r.SeqNum, 10))
		}
		return strings.Join(out, ",")
	}
	now := time.Now().Unix()
	window := "since=" + strconv.FormatInt(now-60, 10) + "&until=" + strconv.FormatInt(now+60, 10)
	for query, want := range map[string]string{
		"":                   "0,1,2,3,4",
		"from=1&to=3":        "1,2,3",
		"from=3":             "3,4",
		"to=1":               "0,1",
		"from=9":             "",
		"first=2":            "0,1",
		"first=0":            "",
		"first=99":           "0,1,2,3,4",
		"last=2":             "3,4",
		"last=99":            "0,1,2,3,4",
		"first=1&last=1":     "0",
		"from=2&first=1":     "2,3,4",
		"from=4&to=4&last=3": "4",
		window + "&from=4":   "0,1,2,3,4",
		"since=" + strconv.FormatInt(now+3600, 10) + "&first=2": "",
	} {
		if got := seqs(query); got != want {
			t.Errorf("%q: got %q, want %q", query, got, want)
		}
	}
	// seq-num wins over everything.
	var one schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history?seq-num=3&from=1&first=2&"+window, 200, &one)
	if one.SeqNum != 3 {
		t.Errorf("seq-num with ranges = %+v", one)
	}
	if code, _, body := f.do(t, "GET", "/scheduler/txn-history?format=text&last=1"); code != 200 ||
		!strings.Contains(body, "Transaction #4") || strings.Contains(body, "Transaction #3") {
		t.Errorf("text last=1: %d %q", code, body)
	}
	f.wantError(t, "GET", "/scheduler/txn-history?from=4&to=2", 400, "before")
	f.wantError(t, "GET", "/scheduler/txn-history?from=x", 400, "from")
	f.wantError(t, "GET", "/scheduler/txn-history?to=-1", 400, "to")
	f.wantError(t, "GET", "/scheduler/txn-history?first=a", 400, "first")
	f.wantError(t, "GET", "/scheduler/txn-history?last=1.5", 400, "last")
	// A malformed parameter is reported even when another selection wins.
	f.wantError(t, "GET", "/scheduler/txn-history?seq-num=1&last=x", 400, "last")
}

// TestTimeBoundsOutOfRange: a time that parses as int64 Unix seconds but
// lies outside what time.Time and JSON can represent (years 1 to 9999)
// wraps around in time.Unix and so selects nothing, or everything; it is
// answered with a 400 naming the parameter instead.
func TestTimeBoundsOutOfRange(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ query, param string }{
		{"/scheduler/txn-history?until=9223372036854775000", "until"},
		{"/scheduler/txn-history?since=-9223372036854775808", "since"},
		{"/scheduler/txn-history?since=0&until=9223372036854775807", "until"},
		{"/scheduler/txn-history?until=253402300800", "until"},
		{"/scheduler/txn-history?since=-62135596801", "since"},
		{"/scheduler/txn-history?since=99999999999999999999", "since"},
		{"/scheduler/graph-snapshot?time=9223372036854775000", "time"},
		{"/scheduler/graph?format=dot&time=-9223372036854775808", "time"},
	} {
		t.Run(c.query, func(t *testing.T) { f.wantError(t, "GET", c.query, 400, "parameter "+c.param) })
	}
	// The bounds of the range itself are accepted.
	var all []schedulerhttp.TxnJSON
	f.getJSON(t, "GET", "/scheduler/txn-history?since=-62135596800&until=253402300799", 200, &all)
	if len(all) != 1 {
		t.Errorf("widest window = %+v", all)
	}
}

func TestKeyTimeline(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.s.StartNBTransaction().SetValue("link/eth0", "down").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var tl schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=link/eth0", 200, &tl)
	if tl.Key != "link/eth0" || tl.Current.State != "CONFIGURED" || len(tl.Timeline) != 4 {
		t.Fatalf("timeline = %+v", tl)
	}
	wantEvents := []struct {
		seq          uint64
		event, op    string
		value, state string
	}{
		{0, "requested", "", `"up"`, ""},
		{0, "executed", "CREATE", `"up"`, "CONFIGURED"},
		{1, "requested", "", `"down"`, ""},
		{1, "executed", "UPDATE", `"down"`, "CONFIGURED"},
	}
	for i, w := range wantEvents {
		e := tl.Timeline[i]
		if e.SeqNum != w.seq || e.Event != w.event {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
			continue
		}
		if w.event == "requested" {
			if string(mustJSON(t, e.Value)) != w.value || e.OpJSON != nil {
				t.Errorf("entry %d = %+v, want %+v", i, e, w)
			}
			continue
		}
		if e.OpJSON == nil || e.Operation != w.op || string(mustJSON(t, e.NewValue)) != w.value || e.NewState != w.state {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
	}

	// A pending value was requested; its create was a NOOP (it waits).
	var pending schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=route/r2", 200, &pending)
	if len(pending.Timeline) != 2 || pending.Timeline[0].Event != "requested" || pending.Current.State != "PENDING" ||
		!pending.Timeline[1].NOOP || pending.Timeline[1].NewState != "PENDING" {
		t.Errorf("pending timeline = %+v", pending)
	}

	// The southbound provides the missing link: it is notified, and the
	// route waiting for it is created.
	if err := f.s.PushSBNotification("link/eth9", "up", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.StartNBTransaction().Commit(ctx); err != nil { // waits for the notification
		t.Fatal(err)
	}
	var notified schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=link/eth9", 200, &notified)
	if len(notified.Timeline) != 2 || notified.Timeline[0].Event != "notified" || notified.Current.State != "OBTAINED" {
		t.Errorf("notified timeline = %+v", notified)
	}
	var created schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=route/r2", 200, &created)
	if n := len(created.Timeline); n != 3 || created.Timeline[2].Operation != "CREATE" || created.Timeline[2].NOOP ||
		created.Current.State != "CONFIGURED" {
		t.Errorf("route/r2 timeline = %+v", created)
	}
	var d schedulerhttp.DumpView
	f.getJSON(t, "GET", "/scheduler/dump?key-prefix=link/eth9", 200, &d)
	if len(d.Values) != 1 || string(mustJSON(t, d.Values[0].Value)) != `"up"` || d.Values[0].ValueSeqNum == nil || *d.Values[0].ValueSeqNum != 2 {
		t.Errorf("dump of notified value = %+v", d)
	}
	// A resync keeps the obtained value; its record lists it, as the
	// reference's does, but nobody requested it.
	rec, err := f.s.StartNBTransaction().WithResync(kvscheduler.UpstreamResync).SetValue("link/eth0", "down").
		SetValue("route/r1", "eth0").SetValue("route/r2", "eth9").Commit(ctx)
	if err != nil || rec.Obtained != 1 || rec.Values[len(rec.Values)-1].Key != "link/eth9" {
		t.Fatalf("resync: %v, values %v (%d obtained)", err, rec.Values, rec.Obtained)
	}
	var kept schedulerhttp.KeyTimeline
	f.getJSON(t, "GET", "/scheduler/key-timeline?key=link/eth9", 200, &kept)
	if len(kept.Timeline) != 2 || kept.Current.State != "OBTAINED" {
		t.Errorf("timeline of the obtained value after the resync = %+v", kept)
	}

	f.wantError(t, "GET", "/scheduler/key-timeline", 400, "key")
	f.wantError(t, "GET", "/scheduler/key-timeline?key=nope", 404, "nope")
}
