package dashboard

import "sync"

// message is one Server-Sent Event, encoded by the producer.
type message struct {
	event string
	data  []byte
}

// ring is a stream client's bounded buffer. push never blocks: when the
// buffer is full it drops the oldest message and counts it, so a browser
// that reads slowly (or not at all) costs memory up to the bound and never
// holds up a producer.
type ring struct {
	mu      sync.Mutex
	buf     []message
	size    int
	dropped int
	// signal has room for one wake-up: a push while the reader is busy
	// leaves one for its next wait.
	signal chan struct{}
}

func newRing(size int) *ring {
	return &ring{size: size, buf: make([]message, 0, size), signal: make(chan struct{}, 1)}
}

// push adds m, dropping the oldest message if the buffer is full; it
// returns whether a message was dropped.
func (r *ring) push(m message) (dropped bool) {
	r.mu.Lock()
	if len(r.buf) == r.size {
		copy(r.buf, r.buf[1:])
		r.buf = r.buf[:r.size-1]
		r.dropped++
		dropped = true
	}
	r.buf = append(r.buf, m)
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
	return dropped
}

// take returns the buffered messages, oldest first, and how many were
// dropped before them, and empties the buffer.
func (r *ring) take() ([]message, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msgs, dropped := r.buf, r.dropped
	r.buf, r.dropped = make([]message, 0, r.size), 0
	return msgs, dropped
}
