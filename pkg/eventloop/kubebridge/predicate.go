package kubebridge

import "k8s.io/apimachinery/pkg/runtime"

// eitherChanged is the predicate of a kind watched twice: an update goes to
// the loop when either watch would have sent it, so neither misses a change
// it asked for (the loop's handlers see every event anyway). A nil
// predicate sends every update.
func eitherChanged(a, b Predicate) Predicate {
	if a == nil || b == nil {
		return nil
	}
	return func(old, new runtime.Object) bool { return a(old, new) || b(old, new) }
}
