package workqueue

// entry is the per-item state. It holds no pointers, so the arena chunks
// that store entries are never scanned by the garbage collector; items refer
// to their entry by index rather than by pointer for the same reason.
type entry struct {
	// seq identifies the slot that currently queues the item. Upgrading an
	// item from Low to High pushes a new slot to the High FIFO instead of
	// removing the old one from the middle of the Low FIFO; the old slot
	// becomes stale because its seq no longer matches and is skipped by Get.
	seq uint64
	// added is when the item was first added (or became ready) since it was
	// last handed out, as nanoseconds since the queue's epoch; only
	// maintained when metrics are enabled.
	added int64
	// prio is the priority the item is queued at or, while processing and
	// dirty, the priority it will be queued at on Done.
	prio  int8
	state uint8
	// dirty marks a processing item that was added again and must be queued
	// again on Done.
	dirty bool
	// delayed marks a dirty item that only delayed adds (AddAfter, a
	// retry) made dirty since it was handed out: CancelAfter drops it.
	delayed bool
}

// arenaChunkBits sets the arena chunk size (1024 entries, 24 KiB): large
// enough that allocation is rare, small enough not to matter when idle.
const arenaChunkBits = 10

const (
	arenaChunkLen  = 1 << arenaChunkBits
	arenaChunkMask = arenaChunkLen - 1
	// maxIdleFree bounds the free list kept once the queue is empty, so the
	// peak of a large resync is not pinned forever.
	maxIdleFree = arenaChunkLen
)

// arena stores entries in fixed-size chunks that are never moved, so
// indexes stay valid, and recycles freed indexes so a steady flow of items
// does not allocate.
type arena struct {
	chunks []*[arenaChunkLen]entry
	// used is how many indexes were ever handed out since the last reset.
	used uint32
	free []uint32
}

func (a *arena) at(i uint32) *entry {
	return &a.chunks[i>>arenaChunkBits][i&arenaChunkMask]
}

func (a *arena) alloc() uint32 {
	if n := len(a.free); n > 0 {
		i := a.free[n-1]
		a.free = a.free[:n-1]
		return i
	}
	if int(a.used)>>arenaChunkBits == len(a.chunks) {
		a.chunks = append(a.chunks, new([arenaChunkLen]entry))
	}
	i := a.used
	a.used++
	return i
}

func (a *arena) release(i uint32) {
	*a.at(i) = entry{}
	a.free = append(a.free, i)
}

// reset returns the arena to its initial size once every index was
// released, so the peak of a burst is not kept. The first chunk is kept so
// an often-empty queue does not reallocate it.
func (a *arena) reset() {
	if len(a.chunks) > 1 {
		clear(a.chunks[1:])
		a.chunks = a.chunks[:1]
	}
	// Entries are zeroed on release and none is held, so only bookkeeping
	// needs resetting.
	a.used = 0
	if cap(a.free) > maxIdleFree {
		a.free = nil
	} else {
		a.free = a.free[:0]
	}
}
