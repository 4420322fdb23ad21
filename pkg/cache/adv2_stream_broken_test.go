package cache_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// breakingStreams plays a connection that breaks a stream of initial
// events: the first stream (asked for as JSON, one event a line) ends
// right after the event naming cut, once gone is closed; the second is
// held before its bookmark (atBookmark is closed there) until release is
// closed.
type breakingStreams struct {
	cut                  []byte
	streams              atomic.Int32
	gone, release        chan struct{}
	atBookmark           chan struct{}
	bookmarkOnce, cutSet sync.Once
	cutSent              chan struct{}
}

func newBreakingStreams(cut string) *breakingStreams {
	return &breakingStreams{
		cut: []byte(`"name":"` + cut + `"`), gone: make(chan struct{}), release: make(chan struct{}),
		atBookmark: make(chan struct{}), cutSent: make(chan struct{}),
	}
}

func (b *breakingStreams) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("sendInitialEvents") != "true" {
				return rt.RoundTrip(req)
			}
			req = req.Clone(req.Context())
			req.Header.Set("Accept", "application/json")
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				return resp, err
			}
			lines := &lineBody{in: bufio.NewReader(resp.Body), closer: resp.Body}
			switch b.streams.Add(1) {
			case 1:
				lines.after = func(line []byte) error {
					if !bytes.Contains(line, b.cut) {
						return nil
					}
					b.cutSet.Do(func() { close(b.cutSent) })
					<-b.gone
					return io.ErrUnexpectedEOF
				}
			case 2:
				lines.before = func(line []byte) {
					if bytes.Contains(line, []byte(`"BOOKMARK"`)) {
						b.bookmarkOnce.Do(func() { close(b.atBookmark) })
						<-b.release
					}
				}
			}
			resp.Body = lines
			return resp, nil
		})
	})
	return cfg
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// lineBody passes a body on line by line, calling before ahead of each
// line and after once a line was read out (its error ends the body).
type lineBody struct {
	in      *bufio.Reader
	closer  io.Closer
	pending []byte
	err     error
	before  func(line []byte)
	after   func(line []byte) error
	last    []byte
}

func (l *lineBody) Read(p []byte) (int, error) {
	if len(l.pending) == 0 {
		if l.last != nil && l.after != nil {
			if err := l.after(l.last); err != nil {
				l.err = err
			}
			l.last = nil
		}
		if l.err != nil {
			return 0, l.err
		}
		line, err := l.in.ReadBytes('\n')
		if len(line) > 0 && l.before != nil {
			l.before(line)
		}
		l.pending, l.last, l.err = line, line, err
		if len(line) == 0 {
			return 0, err
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

func (l *lineBody) Close() error { return l.closer.Close() }

// TestAdv2StreamReadDoesNotAnswerWithABrokenStreamsObject: a stream of
// initial events that breaks is listed again from the start (client-go's
// reflector asks for a new stream). What the broken stream handed out is
// no longer kept current: here cm-0, handed by the first stream, is
// deleted before the second starts, and the second stream has handed
// every other object (cm-1, cm-2: a stream comes in key order) but not its
// bookmark yet. GetStreamed still answers cm-0 as existing from the broken
// stream, so pkg/generic's Get and pkg/controller's passes before the
// sync act on an object that is gone, for as long as the second stream
// takes (seconds for 10,000 objects); for the same reason, a stopped
// run's stream answers nothing (docs: "nothing keeps what it streamed
// current"). What the second stream handed (cm-1) is answered.
func TestAdv2StreamReadDoesNotAnswerWithABrokenStreamsObject(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createConfigMaps(t, ns, 0, 3)
	streams := newBreakingStreams("cm-0")
	var released sync.Once
	release := func() { released.Do(func() { close(streams.release) }) }
	t.Cleanup(release)
	var goneOnce sync.Once
	t.Cleanup(func() { goneOnce.Do(func() { close(streams.gone) }) })
	f := newCacheFactory(t, streams.wrap(cp.Config()), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, StreamInitialList: true, InitialEventsTimeout: time.Hour},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	log := &streamLog{}
	if _, err := informer.AddEventHandler(log.handler(informer)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("handler given %v", log.snapshot())
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "cm-0 handed by the first stream", func() bool {
		return slices.Contains(log.snapshot(), "add cm-0 true")
	})
	if err := kube(t).CoreV1().ConfigMaps(ns).Delete(t.Context(), "cm-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	goneOnce.Do(func() { close(streams.gone) }) // the first stream breaks
	select {
	case <-streams.atBookmark:
	case <-time.After(time.Minute):
		t.Fatal("the second stream never reached its bookmark")
	}
	controlplanetest.Eventually(t, time.Minute, "cm-1 and cm-2 handed by the second stream", func() bool {
		events := log.snapshot()
		return slices.Contains(events, "add cm-1 true") && slices.Contains(events, "add cm-2 true")
	})
	obj, exists, synced, err := informer.(cache.StreamReader).GetStreamed(ns + "/cm-0")
	if synced || informer.HasSynced() {
		t.Fatal("synced while the second stream's bookmark was held: the test shows nothing")
	}
	if err != nil || exists {
		t.Errorf("GetStreamed(cm-0) before the sync = %s, exists %t, err %v; want a miss: cm-0 was deleted, its stream broke and the stream listing again lacks it", nameOf(obj), exists, err)
	}
	// What the stream listing again has handed is answered.
	if obj, exists, _, err := informer.(cache.StreamReader).GetStreamed(ns + "/cm-1"); err != nil || !exists {
		t.Errorf("GetStreamed(cm-1) before the sync = %s, exists %t, err %v; want cm-1, which the second stream handed", nameOf(obj), exists, err)
	}
	release()
	controlplanetest.Eventually(t, time.Minute, "the handler, handed cm-0 early, told it was deleted", func() bool {
		return slices.Contains(log.snapshot(), "delete cm-0")
	})
}
