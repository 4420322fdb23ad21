package operator

import "sync"

// notices carries problems the loop's handlers find about a WebApp to the
// status reporter, which runs on other goroutines: the one piece of loop
// state that is shared, hence the lock.
type notices struct {
	mu sync.Mutex
	m  map[string]string // "namespace/name" -> problem
}

func (n *notices) set(key, problem string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]string{}
	}
	n.m[key] = problem
}

func (n *notices) clear(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.m, key)
}

func (n *notices) get(key string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[key]
}

func (n *notices) reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.m = nil
}
