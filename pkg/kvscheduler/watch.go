package kvscheduler

import (
	"context"
	"sync"
)

// Watch delivers status updates of the selected keys. A slow reader never
// loses an update silently: undelivered updates are coalesced per key, so
// the latest status of every changed key is always delivered.
type Watch struct {
	s        *Scheduler
	selector func(key string) bool
	ch       chan ValueStatus

	mu      sync.Mutex
	pending map[string]ValueStatus
	order   []string
	signal  chan struct{}
	done    chan struct{}
	once    sync.Once
}

// WatchValueStatus subscribes to status updates of keys matching selector
// (all keys if nil). The subscription ends when ctx is done or Close is
// called; the channel is then closed. The selector is called while the
// scheduler publishes statuses, with its locks held: it must only look at
// the key, and must not call the scheduler.
func (s *Scheduler) WatchValueStatus(ctx context.Context, selector func(key string) bool) *Watch {
	w := &Watch{s: s, selector: selector, ch: make(chan ValueStatus), pending: map[string]ValueStatus{},
		signal: make(chan struct{}, 1), done: make(chan struct{})}
	// Registered under the status lock, where Close takes the watches to
	// close them: a watch started while Close runs is closed either way.
	s.smu.Lock()
	if s.watchesClosed {
		s.smu.Unlock()
		close(w.done)
		close(w.ch)
		return w
	}
	if f := s.beforeWatch.Load(); f != nil {
		(*f)()
	}
	s.watches[w] = struct{}{}
	s.smu.Unlock()
	go w.deliver(ctx)
	return w
}

// C returns the channel of status updates.
func (w *Watch) C() <-chan ValueStatus { return w.ch }

// Close ends the subscription.
func (w *Watch) Close() {
	w.once.Do(func() { close(w.done) })
}

// push is called with the scheduler's status lock held; it never blocks.
func (w *Watch) push(st ValueStatus) {
	if w.selector != nil && !w.selector(st.Key) {
		return
	}
	w.mu.Lock()
	if _, ok := w.pending[st.Key]; !ok {
		w.order = append(w.order, st.Key)
	}
	w.pending[st.Key] = st
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *Watch) deliver(ctx context.Context) {
	defer func() {
		w.s.smu.Lock()
		delete(w.s.watches, w)
		w.s.smu.Unlock()
		close(w.ch)
	}()
	for {
		w.mu.Lock()
		if len(w.order) == 0 {
			w.mu.Unlock()
			select {
			case <-w.signal:
				continue
			case <-w.done:
				return
			case <-ctx.Done():
				return
			}
		}
		k := w.order[0]
		st := w.pending[k]
		w.mu.Unlock()
		select {
		case w.ch <- st:
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
		w.mu.Lock()
		// A newer status may have arrived while sending: keep it queued.
		if cur := w.pending[k]; cur.equal(st) {
			delete(w.pending, k)
			w.order = w.order[1:]
		}
		w.mu.Unlock()
	}
}
