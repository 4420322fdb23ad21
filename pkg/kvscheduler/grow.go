package kvscheduler

// appendDoubling appends v to s, doubling the room of a large slice when
// it is full. append grows large slices by about a quarter, so a list
// built up to n elements allocates about 5n in total; doubling allocates
// about 2n. The scheduler's per-batch lists (a transaction's values, its
// record, the dirty nodes, the nodes per descriptor of a read) reach the
// size of the batch.
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) && cap(s) >= 256 {
		s = append(make([]T, 0, 2*cap(s)), s...)
	}
	return append(s, v)
}

// reserve makes room for about n new values (and, when a descriptor
// derives values, as many derived ones) in maps that would otherwise grow
// step by step in a first large transaction. Maps cannot grow in place:
// only empty ones are replaced. Room for derived values that never come
// is not free: the two maps are a tenth of what a batch of values without
// derived values leaves in memory.
func (s *Scheduler) reserve(n int) {
	if n < 256 {
		return
	}
	if s.reg.derives() {
		n *= 2
	}
	if len(s.g.nodes) == 0 {
		s.g.nodes = make(map[string]*node, n)
	}
	s.smu.Lock()
	if len(s.statuses) == 0 {
		s.statuses = make(map[string]*pubEntry, n)
	}
	s.smu.Unlock()
}
