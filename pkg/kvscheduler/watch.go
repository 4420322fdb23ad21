package kvscheduler

import (
	"context"
	"fmt"
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
	// err is why the watch ended on its own (its selector panicked); set
	// under mu before done is closed.
	err    error
	signal chan struct{}
	done   chan struct{}
	once   sync.Once
}

// WatchValueStatus subscribes to status updates of keys matching selector
// (all keys if nil). The subscription ends when ctx is done or Close is
// called; the channel is then closed. The selector is called while the
// scheduler publishes statuses, with its locks held: it must only look at
// the key, and must not call the scheduler. A selector that panics ends
// the subscription (its channel is closed) and Err then returns an error
// wrapping ErrPanic: the scheduler goes on, and the watcher learns it may
// have missed updates rather than missing them silently.
func (s *Scheduler) WatchValueStatus(ctx context.Context, selector func(key string) bool) *Watch {
	w := &Watch{s: s, selector: selector, ch: make(chan ValueStatus), pending: map[string]ValueStatus{},
		signal: make(chan struct{}, 1), done: make(chan struct{})}
	// Registered under the status lock, where Close takes the watches to
	// close them: a watch started while Close runs is closed either way.
	s.smu.Lock()
	if s.watchesClosed {
		s.smu.Unlock()
		// Through Close, never directly: its owner's Close (deferred by
		// every reader) must find done closed by the same Once.
		w.Close()
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

// Err returns why the subscription ended on its own: an error wrapping
// ErrPanic when its selector panicked, nil otherwise (also after Close or
// the end of its context). Read it once the channel is closed.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// push is called with the scheduler's status lock held; it never blocks.
func (w *Watch) push(st ValueStatus) {
	select {
	case <-w.done: // ended: its updates would not be delivered
		return
	default:
	}
	if w.selector != nil {
		selected, err := w.selects(st.Key)
		if err != nil {
			w.fail(err)
			return
		}
		if !selected {
			return
		}
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

// selects calls the user's selector on the scheduler's goroutine: its panic
// is recovered here, or it would crash the process.
func (w *Watch) selects(key string) (selected bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: watch selector on key %q: %v", ErrPanic, key, r)
		}
	}()
	return w.selector(key), nil
}

// fail ends the watch with err, once, and logs it: the statuses its
// selector could not select are not delivered, so it must not go on as if
// complete.
func (w *Watch) fail(err error) {
	w.mu.Lock()
	first := w.err == nil
	if first {
		w.err = err
	}
	w.mu.Unlock()
	if first {
		if l := w.s.opts.Logger; l != nil {
			l.WithError(err).Error("kvscheduler: watch ended")
		}
	}
	w.Close()
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
