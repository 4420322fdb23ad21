package schedulerhttp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

func TestDownstreamResyncRepairsDrift(t *testing.T) {
	f := newFixture(t)
	f.sb.Remove("link/eth0")
	f.sb.ResetOps()
	var rec schedulerhttp.TxnJSON
	f.getJSON(t, "POST", "/scheduler/downstream-resync", 200, &rec)
	if rec.ResyncType != "Downstream" || rec.SeqNum != 1 {
		t.Errorf("record = %+v", rec)
	}
	if got := f.sb.Values()["link/eth0"]; got != "up" {
		t.Errorf("link/eth0 in southbound = %v; ops %v", got, f.sb.OpStrings())
	}
	if st := f.s.GetValueStatus("link/eth0"); st.State != kvscheduler.Configured {
		t.Errorf("status = %+v", st)
	}
	// The scheduler retries a value with the options of the transaction
	// that set it, so a resync cannot ask for retries: the parameter it
	// once had is refused rather than ignored, and nothing is committed.
	for _, v := range []string{"true", "1", "false", "maybe", ""} {
		f.wantError(t, "POST", "/scheduler/downstream-resync?retry="+v, 400, "parameter retry is not supported")
	}
	if recs := f.s.TransactionHistory(time.Time{}, time.Time{}); len(recs) != 2 {
		t.Errorf("%d transactions after refused resyncs, want 2", len(recs))
	}

	// A failed re-create is reported, and the answer says that the
	// scheduler does not retry it (the value was set without retry
	// options, which are the ones the scheduler applies).
	f.sb.Remove("link/eth0")
	f.sb.FailNext("create", "link/eth0", errors.New("boom"))
	var failed schedulerhttp.ResyncResult
	f.getJSON(t, "POST", "/scheduler/downstream-resync", 200, &failed)
	if len(failed.Errors) != 1 || !strings.Contains(failed.Errors[0], "boom") ||
		len(failed.NotRetrying) != 1 || failed.NotRetrying[0] != "link/eth0" {
		t.Errorf("failed resync = %+v", failed)
	}
	// The route over the link is removed with it and waits for it; the
	// explanation shows that the link failed, and why.
	var r1 schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=route/r1", 200, &r1)
	if r1.State != "PENDING" || len(r1.WaitingFor) != 1 || r1.WaitingFor[0].Key != "link/eth0" ||
		r1.WaitingFor[0].State != "FAILED" || r1.WaitingFor[0].Error != "boom" {
		t.Errorf("route over the failed link = %+v", r1)
	}
	f.wantError(t, "GET", "/scheduler/downstream-resync", 405, "GET")
	code, hdr, _ := f.do(t, "GET", "/scheduler/downstream-resync")
	if code != 405 || hdr.Get("Allow") != "POST" {
		t.Errorf("GET: %d Allow=%q", code, hdr.Get("Allow"))
	}
}

func TestDownstreamResyncClosed(t *testing.T) {
	f := newFixture(t)
	_ = f.s.Close()
	f.wantError(t, "POST", "/scheduler/downstream-resync", 503, "closed")
}

func TestDownstreamResyncValueWithRetry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// The value's own retry options are the ones the scheduler applies; a
	// long period keeps the retry from running during the test.
	if _, err := f.s.StartNBTransaction().SetValue("link/eth1", "up").
		WithRetry(kvscheduler.RetryOptions{Period: time.Hour}).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f.sb.Remove("link/eth1")
	f.sb.FailNext("create", "link/eth1", errors.New("boom"))
	var res schedulerhttp.ResyncResult
	f.getJSON(t, "POST", "/scheduler/downstream-resync", 200, &res)
	if len(res.Errors) != 1 || len(res.NotRetrying) != 0 {
		t.Errorf("resync = %+v", res)
	}
	var st schedulerhttp.StatusJSON
	f.getJSON(t, "GET", "/scheduler/status?key=link/eth1", 200, &st)
	if st.State != "RETRYING" || st.Error != "boom" {
		t.Errorf("status = %+v", st)
	}
}
