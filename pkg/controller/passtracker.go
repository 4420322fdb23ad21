package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// ObjectRef names an object by its resource, never its version: what a
// request's URL says of the object it writes.
type ObjectRef struct {
	Group, Resource, Namespace, Name string
}

// PassTracker is told of each pass of a kind's handlers over an object
// that exists, with the resourceVersion of the copy the handlers are
// given, so that the writes of that object made during the pass can be
// made conditional on it: package leader's fence adds that version as a
// precondition to such writes that carry none, so a write delayed in the
// network fails with a conflict once anyone else wrote the object, rather
// than land after another replica took the object over. Handling is
// called in the worker that holds the key, before the first handler; done
// after the last one returned. A panic of Handling fails the pass (retried
// with backoff); a panic of done is logged with the key and the stack, and
// does not: the handlers' work is done, and a retry would tell them again.
// A runtime.Goexit of either counts as its panic: the pass is retried or
// not alike, and a new worker goroutine takes the place of the one that
// ended.
type PassTracker interface {
	// Handling is told that a pass over obj, at resourceVersion, begins;
	// done is called when it ends.
	Handling(obj ObjectRef, resourceVersion string) (done func())
}

// DeletionTracker is a PassTracker that is told of the passes that give
// the handlers an object's absence (its deletion) as well, which carry no
// version: what needs to know every pass under way over an object, such
// as pkg/shard's Join, which keeps a later membership term's handlers off
// an object a lost term's handler (its deletion's included) still runs for.
type DeletionTracker interface {
	PassTracker
	// HandlingDeletion is told that a pass giving the handlers obj's
	// absence begins; done is called when it ends.
	HandlingDeletion(obj ObjectRef) (done func())
}

// tracking tells the PassTracker of the pass over key, whose handlers are
// given obj, and returns what ends it (nil when there is nothing to tell:
// no tracker, a deletion and a tracker that is no DeletionTracker, a
// resource not known yet).
func (c *controller) tracking(key string, obj runtime.Object) func() {
	if c.opts.Passes == nil || c.opts.Resource == nil {
		return nil
	}
	deletions, tracksDeletions := c.opts.Passes.(DeletionTracker)
	if obj == nil && !tracksDeletions {
		return nil
	}
	rv := ""
	if obj != nil {
		m, err := meta.Accessor(obj)
		if err != nil || m.GetResourceVersion() == "" {
			return nil
		}
		rv = m.GetResourceVersion()
	}
	gr, err := c.opts.Resource()
	if err != nil {
		return nil
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ref := ObjectRef{Group: gr.Group, Resource: gr.Resource, Namespace: ns, Name: name}
	if obj == nil {
		return deletions.HandlingDeletion(ref)
	}
	return c.opts.Passes.Handling(ref, rv)
}
