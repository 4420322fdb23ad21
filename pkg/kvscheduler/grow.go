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
