package dashboard_test

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// TestAdv2AClosedHeadStreamFreesItsSlot: the safety row says "a closed
// stream frees its slot". HEAD is served (ServeHTTP lets GET and HEAD
// through, the mux's GET pattern takes HEAD) by the streaming handler,
// which counts a client and runs until its context ends; but a HEAD
// answer has no body, so the client has its complete answer with the
// headers and, keeping the connection alive, sends its next request on
// it (any HTTP client: a monitor's HEAD check, curl -I, Go's
// http.Client). The server's background read takes that request's first
// byte and stops watching the connection, and every write of the handler
// to a HEAD answer is discarded by net/http, so none ever fails: when the
// client closes the connection, nothing tells the handler, and the slot
// (of MaxStreamClients) is held for good, with the reader goroutine that
// polls the histories. A GET stream in the same state is freed at its
// next write (the control below).
func TestAdv2AClosedHeadStreamFreesItsSlot(t *testing.T) {
	for _, method := range []string{"GET", "HEAD"} {
		t.Run(method, func(t *testing.T) {
			f := newFixture(t)
			opts := dashboard.Options{MaxStreamClients: 2, PollInterval: 10 * time.Millisecond, Scheduler: f.s, Loop: f.loop}
			d, err := dashboard.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			// An http.Server, not httptest's: its Close waits for every
			// handler, and the leaked one never returns.
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: d}
			go func() { _ = srv.Serve(lis) }()
			t.Cleanup(func() { _ = srv.Close() })
			conn, err := net.Dial("tcp", lis.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte(method + " /ui/api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s /ui/api/stream: %s", method, resp.Status)
			}
			if method == "GET" {
				controlplanetest.Eventually(t, 30*time.Second, "the stream counted", func() bool { return d.Clients() == 1 })
			} else if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				// A HEAD opens no stream (it counts no client): its answer
				// is the headers a GET would get.
				t.Fatalf("HEAD /ui/api/stream: Content-Type %q, not the stream's", ct)
			}
			// The client's next request on its kept-alive connection, then
			// it goes away.
			if _, err := conn.Write([]byte("GET /ui/api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			if err := conn.Close(); err != nil {
				t.Fatal(err)
			}
			// The operator keeps working, so the stream has something to
			// write (a GET stream's writes fail on the closed connection).
			// Well past the 15s heartbeat too.
			deadline := time.Now().Add(45 * time.Second)
			for i := 0; d.Clients() != 0; i++ {
				if time.Now().After(deadline) {
					t.Fatalf("%s stream: the client closed its connection, and %d stream client(s) are still counted "+
						"(of MaxStreamClients 2) after %d more events", method, d.Clients(), i)
				}
				f.push(t, eventlooptest.NewUpdate("put db/x"+itoa(uint64(i))))
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
