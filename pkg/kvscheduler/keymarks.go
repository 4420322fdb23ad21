package kvscheduler

// keyMark is what the walk marks of a key the transaction names.
type keyMark uint8

const (
	markApplied keyMark = 1 << iota // set by the transaction itself
	markLater                       // a value of the transaction not applied yet
)

func (w *walker) mark(k string, m keyMark) {
	if w.marks == nil {
		w.marks = map[string]keyMark{}
	}
	w.marks[k] |= m
}

// setApplied marks k as set by the transaction itself.
func (w *walker) setApplied(k string) { w.mark(k, markApplied) }

// setLater marks k as a value of the transaction not applied yet.
func (w *walker) setLater(k string) { w.mark(k, markLater) }

// applyNow marks k, a value of the transaction, as applied now: no longer
// later.
func (w *walker) applyNow(k string) {
	if w.marks == nil {
		w.marks = map[string]keyMark{}
	}
	w.marks[k] = w.marks[k]&^markLater | markApplied
}

func (w *walker) isApplied(k string) bool { return w.marks[k]&markApplied != 0 }

// later tells whether k is a value of the transaction not applied yet.
func (w *walker) later(k string) bool { return w.marks[k]&markLater != 0 }
