package workqueue

// chunkSize is the number of slots per fifo chunk: big enough that chunk
// allocation is rare, small enough that an idle queue holds little memory.
const chunkSize = 1024

type chunk[E any] struct {
	slots [chunkSize]E
	next  *chunk[E]
}

// fifo is a queue of slots stored in a linked list of fixed-size chunks. A
// slice used as a queue leaks its consumed prefix and reallocates under a
// steady flow, and a growable ring copies everything on each growth (a
// resync of a large cluster means copying millions of slots, with write
// barriers during GC). Chunks are never copied, are released as soon as
// they are consumed, and one spare chunk is kept so a queue that hovers
// around a chunk boundary does not allocate on every crossing.
type fifo[E any] struct {
	head, tail *chunk[E]
	// r is the read index in head, w the write index in tail.
	r, w  int
	n     int
	spare *chunk[E]
}

func (f *fifo[E]) len() int { return f.n }

func (f *fifo[E]) push(e E) {
	switch {
	case f.tail == nil:
		f.head = f.newChunk()
		f.tail = f.head
		f.r, f.w = 0, 0
	case f.w == chunkSize:
		c := f.newChunk()
		f.tail.next = c
		f.tail = c
		f.w = 0
	}
	f.tail.slots[f.w] = e
	f.w++
	f.n++
}

// pop must only be called when len() > 0.
func (f *fifo[E]) pop() E {
	var zero E
	c := f.head
	e := c.slots[f.r]
	// Clear the slot so the queue does not keep the item's memory alive.
	c.slots[f.r] = zero
	f.r++
	f.n--
	switch {
	case f.r == chunkSize:
		f.head = c.next
		f.r = 0
		if f.head == nil {
			f.tail = nil
			f.w = 0
		}
		c.next = nil
		f.spare = c
	case f.n == 0:
		// Empty with head == tail: rewind instead of moving on.
		f.r, f.w = 0, 0
	}
	return e
}

// reset drops every slot and releases the memory.
func (f *fifo[E]) reset() {
	*f = fifo[E]{}
}

func (f *fifo[E]) newChunk() *chunk[E] {
	if c := f.spare; c != nil {
		f.spare = nil
		return c
	}
	return new(chunk[E])
}
