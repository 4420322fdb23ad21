package dashboard_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// stuckWriter is a browser that stopped reading: every write blocks until
// it is released.
type stuckWriter struct {
	header   http.Header
	released chan struct{}
	mu       sync.Mutex
	out      bytes.Buffer
	flushes  []int // the length of out at each Flush
}

func (w *stuckWriter) Header() http.Header { return w.header }
func (w *stuckWriter) WriteHeader(int)     {}
func (w *stuckWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushes = append(w.flushes, w.out.Len())
}
func (w *stuckWriter) Write(b []byte) (int, error) {
	<-w.released
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(b)
}

// flushed returns what was written and flushed, and where each flush was.
func (w *stuckWriter) flushed() (string, []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.flushes) == 0 {
		return "", nil
	}
	return w.out.String()[:w.flushes[len(w.flushes)-1]], append([]int(nil), w.flushes...)
}

// TestAStuckBrowserNeverHoldsUpTheLoop attaches a stream client that reads
// nothing, then runs 400 events, each a transaction creating a value: the
// loop processes every one while the client is stuck, and the client's
// buffer drops the oldest messages. Once the client reads again, its first
// batch is the marker saying how many it lost and at most a buffer's worth
// of messages; nothing is lost silently (what arrived and what the markers
// count add up to every event and transaction, which carries the statuses it
// changed).
func TestAStuckBrowserNeverHoldsUpTheLoop(t *testing.T) {
	const events, buffer = 400, 32
	f := newFixture(t)
	d, err := dashboard.New(dashboard.Options{Scheduler: f.s, Loop: f.loop, StreamBuffer: buffer})
	if err != nil {
		t.Fatal(err)
	}
	w := &stuckWriter{header: http.Header{}, released: make(chan struct{})}
	req := httptest.NewRequestWithContext(t.Context(), "GET", "/ui/api/stream", nil)
	req.Host = "localhost" // the dashboard answers its own names only
	go d.ServeHTTP(w, req)
	// The stream starts after what is recorded when it connects.
	controlplanetest.Eventually(t, time.Minute, "the client to connect", func() bool { return d.Clients() == 1 })

	before := f.loop.Status().Processed
	for i := range events {
		f.push(t, eventlooptest.NewUpdate(fmt.Sprintf("put db/%03d", i)))
	}
	if got := f.loop.Status().Processed - before; got != events {
		t.Fatalf("the loop processed %d events, want %d", got, events)
	}
	controlplanetest.Eventually(t, time.Minute, "the stuck client's buffer to drop messages", func() bool {
		return d.Dropped() >= events
	})
	close(w.released)

	// Every event and transaction: delivered or counted.
	want := 1 + 2*events
	marker := regexp.MustCompile(`event: dropped\ndata: \{"dropped":(\d+)\}\n\n`)
	var out string
	var flushes []int
	controlplanetest.Eventually(t, time.Minute, fmt.Sprintf("%d messages delivered or counted as dropped", want), func() bool {
		out, flushes = w.flushed()
		got := strings.Count(out, "event: ") - strings.Count(out, "event: dropped")
		for _, m := range marker.FindAllStringSubmatch(out, -1) {
			n, _ := strconv.Atoi(m[1])
			got += n
		}
		return got >= want
	})
	first := marker.FindStringIndex(out)
	if first == nil {
		t.Fatalf("no drop marker in %q", out)
	}
	// The batch the marker opens ends at the next flush.
	end := len(out)
	for _, f := range flushes {
		if f > first[0] {
			end = f
			break
		}
	}
	if n := strings.Count(out[first[1]:end], "event: "); n > buffer {
		t.Errorf("the marker's batch has %d messages, more than the buffer of %d", n, buffer)
	}
}
