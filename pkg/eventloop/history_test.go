package eventloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// historyEnv processes five events: #0 (startup) at t0, #1 at t0+10s, #2 at
// t0+20s followed by its follow-up #3 at the same time, #4 at t0+40s; #2
// fails in handler b.
func historyEnv(t *testing.T) *env {
	e := newEnv(t, []string{"a", "b"})
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		txn.Put("key-"+ev.GetName(), 1)
		if ev.GetName() == "e2" {
			if err := txn.PushFollowUp(el.NewUpdate("e3")); err != nil {
				return "", err
			}
		}
		return "changed " + ev.GetName(), nil
	}
	e.h("b").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "e2" {
			return "", errors.New("b failed")
		}
		return "", nil
	}
	e.startRunning()
	for _, n := range []string{"e1", "e2", "e4"} {
		e.clock.Step(10 * time.Second)
		ev := el.NewUpdate(n)
		if n == "e2" {
			ev.Txn = eventloop.BestEffortIgnoreErrors // no healing to interleave
			e.push(ev)
			_ = wait(t, ev)
			e.waitProcessed(4)
			e.clock.Step(10 * time.Second)
			continue
		}
		if err := e.run(ev); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

type httpResult struct {
	status int
	body   string
}

func get(h http.Handler, method, url string) httpResult {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, url, nil))
	return httpResult{rec.Code, rec.Body.String()}
}

func seqsOf(t *testing.T, body string) []uint64 {
	t.Helper()
	var recs []struct{ SeqNum uint64 }
	if err := json.Unmarshal([]byte(body), &recs); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	out := []uint64{}
	for _, r := range recs {
		out = append(out, r.SeqNum)
	}
	return out
}

func TestHistoryHTTP(t *testing.T) {
	e := historyEnv(t)
	h := e.loop.HTTPHandler()
	unix := func(d time.Duration) string { return fmt.Sprint(t0.Add(d).Unix()) }
	const path = "/controller/event-history"

	lists := []struct {
		query string
		want  []uint64
	}{
		{"", []uint64{0, 1, 2, 3, 4}},
		{"?since=" + unix(15*time.Second), []uint64{2, 3, 4}},
		{"?until=" + unix(25*time.Second), []uint64{0, 1, 2, 3}},
		{"?since=" + unix(15*time.Second) + "&until=" + unix(25*time.Second), []uint64{2, 3}},
		{"?since=" + unix(40*time.Second) + "&until=" + unix(40*time.Second), []uint64{4}},
		{"?since=" + unix(time.Hour), []uint64{}},
		{"?from=1&to=3", []uint64{1, 2, 3}},
		{"?from=3", []uint64{3, 4}},
		{"?to=1", []uint64{0, 1}},
		{"?first=2", []uint64{0, 1}},
		{"?last=2", []uint64{3, 4}},
		{"?last=99", []uint64{0, 1, 2, 3, 4}},
		{"?first=0", []uint64{}},
		// precedence: since/until over from/to over first over last
		{"?from=4&since=" + unix(15*time.Second) + "&until=" + unix(25*time.Second), []uint64{2, 3}},
		{"?first=1&from=3", []uint64{3, 4}},
		{"?last=1&first=2", []uint64{0, 1}},
	}
	for _, c := range lists {
		res := get(h, http.MethodGet, path+c.query)
		if res.status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", c.query, res.status, res.body)
		}
		eq(t, c.query, seqsOf(t, res.body), c.want)
	}

	// seq-num wins over everything and returns one object.
	res := get(h, http.MethodGet, path+"?seq-num=2&from=0&first=1")
	if res.status != http.StatusOK {
		t.Fatalf("seq-num: %d %s", res.status, res.body)
	}
	var rec struct {
		SeqNum     uint64 `json:"seqNum"`
		Name       string `json:"name"`
		Method     string `json:"method"`
		IsFollowUp bool   `json:"isFollowUp"`
		Handlers   []struct {
			Handler, Change, Error string
		} `json:"handlers"`
		Txn struct {
			SeqNum uint64 `json:"seqNum"`
			Ops    []struct{ Operation, Key string }
		} `json:"txn"`
	}
	if err := json.Unmarshal([]byte(res.body), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.SeqNum != 2 || rec.Name != "e2" || rec.Method != "Update" || len(rec.Handlers) != 2 ||
		rec.Handlers[0].Change != "changed e2" || rec.Handlers[1].Error != "b failed" ||
		rec.Txn.SeqNum != 3 || len(rec.Txn.Ops) != 1 || rec.Txn.Ops[0].Operation != "PUT" || rec.Txn.Ops[0].Key != "key-e2" {
		t.Fatalf("record #2: %s", res.body)
	}
	res = get(h, http.MethodGet, path+"?seq-num=3")
	if !strings.Contains(res.body, `"isFollowUp":true`) || !strings.Contains(res.body, `"followUpTo":2`) {
		t.Fatalf("record #3 is not a follow-up of #2: %s", res.body)
	}

	errs := []struct {
		method, query string
		status        int
	}{
		{http.MethodGet, "?seq-num=99", http.StatusNotFound},
		{http.MethodGet, "?seq-num=x", http.StatusBadRequest},
		{http.MethodGet, "?seq-num=-1", http.StatusBadRequest},
		{http.MethodGet, "?since=yesterday", http.StatusBadRequest},
		{http.MethodGet, "?until=1.5", http.StatusBadRequest},
		{http.MethodGet, "?since=" + unix(time.Minute) + "&until=" + unix(0), http.StatusBadRequest},
		{http.MethodGet, "?from=x", http.StatusBadRequest},
		{http.MethodGet, "?from=3&to=1", http.StatusBadRequest},
		{http.MethodGet, "?first=-1", http.StatusBadRequest},
		{http.MethodGet, "?last=many", http.StatusBadRequest},
		{http.MethodPost, "", http.StatusMethodNotAllowed},
	}
	for _, c := range errs {
		res := get(h, c.method, path+c.query)
		var body struct{ Error string }
		if res.status != c.status || json.Unmarshal([]byte(res.body), &body) != nil || body.Error == "" {
			t.Errorf("%s %s: %d %s, want %d with a JSON error", c.method, c.query, res.status, res.body, c.status)
		}
	}
	if res := get(h, http.MethodGet, "/controller/nothing"); res.status != http.StatusNotFound {
		t.Errorf("unknown path: %d", res.status)
	}
}

func TestResyncRequestHTTP(t *testing.T) {
	e := newEnv(t, []string{"a"})
	e.startRunning()
	h := e.loop.HTTPHandler()
	if res := get(h, http.MethodGet, "/controller/resync"); res.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET resync: %d", res.status)
	}
	if res := get(h, http.MethodPost, "/controller/resync"); res.status != http.StatusAccepted {
		t.Fatalf("POST resync: %d %s", res.status, res.body)
	}
	e.waitProcessed(2)
	eq(t, "calls", callsOf(e.calls.Calls(), "Requested Resync"), []string{"resync:a"})

	_ = e.loop.Close()
	if res := get(h, http.MethodPost, "/controller/resync"); res.status != http.StatusServiceUnavailable {
		t.Fatalf("POST resync on a closed loop: %d", res.status)
	}

	var requested atomic.Int32
	refuse := errors.New("not now")
	e2 := newEnv(t, nil, func(o *eventloop.Options) {
		o.OnResyncRequest = func(ctx context.Context) error {
			if requested.Add(1) > 1 {
				return refuse
			}
			return nil
		}
	})
	e2.startRunning()
	h2 := e2.loop.HTTPHandler()
	if res := get(h2, http.MethodPost, "/controller/resync"); res.status != http.StatusAccepted || requested.Load() != 1 {
		t.Fatalf("POST resync with OnResyncRequest: %d, %d requests", res.status, requested.Load())
	}
	if res := get(h2, http.MethodPost, "/controller/resync"); res.status != http.StatusServiceUnavailable || !strings.Contains(res.body, refuse.Error()) {
		t.Fatalf("POST resync refused: %d %s", res.status, res.body)
	}
}

func TestHistoryTrimming(t *testing.T) {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) {
		c.EventHistoryAgeLimit.Duration = 10 * time.Minute
		c.PermanentlyRecordedInitPeriod.Duration = 5 * time.Minute
		c.EventHistoryMaxRecords = 6 // at most 3 permanent
	}))
	e.startRunning() // t0, permanent
	at := func(d time.Duration, names ...string) {
		t.Helper()
		e.clock.SetTime(t0.Add(d))
		for _, n := range names {
			if err := e.run(el.NewUpdate(n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	at(time.Minute, "p1")     // permanent
	at(2*time.Minute, "p2")   // permanent, the last: half of the bound
	at(3*time.Minute, "late") // in the init period, but no room: not permanent
	at(6*time.Minute, "r1")
	at(7*time.Minute, "r2", "r3", "r4")
	// The count bound dropped the oldest non-permanent records.
	eq(t, "after the count bound", names(e.loop.History().Records()), []string{"startup", "p1", "p2", "r2", "r3", "r4"})

	at(16*time.Minute+30*time.Second, "r5")
	// The trim timer must be armed before time jumps (it is re-armed by the
	// loop after each firing).
	waitFor(t, "trim timer", func() bool { return e.clock.Waiters() == 1 })
	e.clock.Step(time.Minute) // t0+17m30s: r2..r4 ended 10m30s ago
	waitFor(t, "trimming", func() bool { return e.loop.History().Len() == 4 })
	eq(t, "after trimming by age", names(e.loop.History().Records()), []string{"startup", "p1", "p2", "r5"})

	// Trimming happens even when idle; the permanent records stay forever.
	waitFor(t, "trim timer", func() bool { return e.clock.Waiters() == 1 })
	e.clock.Step(24 * time.Hour)
	waitFor(t, "trimming", func() bool { return e.loop.History().Len() == 3 })
	eq(t, "init period kept", names(e.loop.History().Records()), []string{"startup", "p1", "p2"})
}

func TestHistoryDisabled(t *testing.T) {
	e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) { c.RecordEventHistory = false }))
	e.startRunning()
	for i := 0; i < 3; i++ {
		if err := e.run(el.NewUpdate("u")); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.loop.History().Len(); n != 0 {
		t.Fatalf("%d records with history off", n)
	}
	if res := get(e.loop.HTTPHandler(), http.MethodGet, "/controller/event-history"); res.status != http.StatusNotFound {
		t.Fatalf("history endpoint with history off: %d", res.status)
	}
}

// countingEvent counts String calls, to prove that descriptions are
// computed once per event.
type countingEvent struct {
	el.Event
	strings *int32
}

func (c *countingEvent) String() string {
	*c.strings++
	return "described " + c.Name
}

// TestHistoryDescribesEachEventOnce: the record gets the event's
// description when the event is finalized (the history keeps the
// description, not the event: see TestHistoryDoesNotKeepEvents), and
// reading the history does not describe it again.
func TestHistoryDescribesEachEventOnce(t *testing.T) {
	e := newEnv(t, []string{"a"})
	e.startRunning()
	var calls int32
	ev := &countingEvent{Event: el.Event{Name: "once"}, strings: &calls}
	e.push(ev)
	if err := wait(t, &ev.Event); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("String called %d times while processing the event, want once", calls)
	}
	rec, ok := e.loop.History().Get(1)
	if !ok || rec.Description != "described once" {
		t.Fatalf("record %+v", rec)
	}
	e.loop.History().Records()
	if calls != 1 {
		t.Fatalf("String called %d times, want once", calls)
	}
}

// TestHistoryHTTPTimeBoundsOutOfRange: a time that parses as int64 Unix
// seconds but lies outside what time.Time and JSON can represent (years 1
// to 9999) wraps around in time.Unix and so selects nothing, or
// everything; it is answered with a 400 naming the parameter instead.
func TestHistoryHTTPTimeBoundsOutOfRange(t *testing.T) {
	e := historyEnv(t)
	h := e.loop.HTTPHandler()
	for _, c := range []struct{ query, param string }{
		{"?until=9223372036854775000", "until"},
		{"?since=-9223372036854775808", "since"},
		{"?since=0&until=9223372036854775807", "until"},
		{"?until=253402300800", "until"},
		{"?since=-62135596801", "since"},
		{"?since=99999999999999999999", "since"},
	} {
		res := get(h, http.MethodGet, "/controller/event-history"+c.query)
		var body struct{ Error string }
		if res.status != http.StatusBadRequest || json.Unmarshal([]byte(res.body), &body) != nil ||
			!strings.Contains(body.Error, "parameter "+c.param) {
			t.Errorf("%s: %d %s, want 400 with an error naming parameter %s", c.query, res.status, res.body, c.param)
		}
	}
	// The bounds of the range itself are accepted.
	res := get(h, http.MethodGet, "/controller/event-history?since=-62135596800&until=253402300799")
	if res.status != http.StatusOK {
		t.Fatalf("widest window: %d %s", res.status, res.body)
	}
	eq(t, "widest window", seqsOf(t, res.body), []uint64{0, 1, 2, 3, 4})
}

// TestHTTPRouting: each path serves one method, the others get 405 with
// Allow and a JSON error; the paths are matched whole, so the API is
// mounted below a prefix with http.StripPrefix.
func TestHTTPRouting(t *testing.T) {
	e := historyEnv(t)
	h := e.loop.HTTPHandler()
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodPost, "/controller/event-history", "GET, HEAD"},
		{http.MethodDelete, "/controller/event-history", "GET, HEAD"},
		{http.MethodGet, "/controller/resync", "POST"},
		{http.MethodPut, "/controller/resync", "POST"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		var body struct{ Error string }
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != c.allow ||
			json.Unmarshal(rec.Body.Bytes(), &body) != nil || !strings.Contains(body.Error, c.method) {
			t.Errorf("%s %s: %d Allow=%q %s, want 405 Allow=%q with a JSON error", c.method, c.path, rec.Code,
				rec.Header().Get("Allow"), rec.Body, c.allow)
		}
	}
	if res := get(h, http.MethodHead, "/controller/event-history"); res.status != http.StatusOK {
		t.Errorf("HEAD history: %d", res.status)
	}
	// Paths are matched whole: below a prefix, the API is not found
	// unless the prefix is stripped.
	if res := get(h, http.MethodGet, "/debug/controller/event-history"); res.status != http.StatusNotFound ||
		!strings.Contains(res.body, "StripPrefix") {
		t.Errorf("unstripped prefix: %d %s", res.status, res.body)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/controller/", http.StripPrefix("/debug", h))
	res := get(mux, http.MethodGet, "/debug/controller/event-history?last=2")
	if res.status != http.StatusOK {
		t.Fatalf("mounted below /debug: %d %s", res.status, res.body)
	}
	eq(t, "mounted below /debug", seqsOf(t, res.body), []uint64{3, 4})
	if res := get(mux, http.MethodGet, "/debug/controller/event-history/?since=-9223372036854775808"); res.status != http.StatusBadRequest ||
		!strings.Contains(res.body, "parameter since") {
		t.Errorf("mounted, out-of-range since: %d %s", res.status, res.body)
	}
	if res := get(mux, http.MethodPost, "/debug/controller/event-history"); res.status != http.StatusMethodNotAllowed {
		t.Errorf("mounted, POST history: %d %s", res.status, res.body)
	}
}
