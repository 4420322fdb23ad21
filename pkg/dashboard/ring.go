package dashboard

import "sync"

// message is one Server-Sent Event, not encoded yet: only the messages a
// client is sent are encoded (by its writer), so a busy operator with a
// slow client costs a copy of a reference per dropped message, not its
// encoding.
type message struct {
	event string
	v     any
}

// ring is a stream client's bounded buffer. push never blocks: when the
// buffer is full it drops the oldest message and counts it, so a browser
// that reads slowly (or not at all) costs memory up to the bound and never
// holds up a producer.
type ring struct {
	mu      sync.Mutex
	buf     []message // circular, len(buf) == size
	head, n int       // the oldest message and the number held
	dropped int
	// signal has room for one wake-up: a push while the reader is busy
	// leaves one for its next wait.
	signal chan struct{}
}

func newRing(size int) *ring {
	return &ring{buf: make([]message, size), signal: make(chan struct{}, 1)}
}

// push adds m, dropping the oldest message if the buffer is full; it
// returns whether a message was dropped.
func (r *ring) push(m message) (dropped bool) {
	r.mu.Lock()
	if r.n == len(r.buf) {
		r.buf[r.head] = m
		r.head = (r.head + 1) % len(r.buf)
		r.dropped++
		dropped = true
	} else {
		r.buf[(r.head+r.n)%len(r.buf)] = m
		r.n++
	}
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
	return dropped
}

// skip counts n messages dropped without ever being buffered: a producer
// that knows they would be dropped does not make them.
func (r *ring) skip(n int) {
	if n <= 0 {
		return
	}
	r.mu.Lock()
	r.dropped += n
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// take returns the buffered messages, oldest first, and how many were
// dropped before them, and empties the buffer.
func (r *ring) take() ([]message, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]message, r.n)
	for i := range out {
		j := (r.head + i) % len(r.buf)
		out[i], r.buf[j] = r.buf[j], message{}
	}
	dropped := r.dropped
	r.head, r.n, r.dropped = 0, 0, 0
	return out, dropped
}
