package controller

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// SharedHandler is one of several handlers of a kind. It returns the object
// as it left it (for example, after updating it), which the next handler
// receives; returning nil passes the object on unchanged.
type SharedHandler interface {
	// OnChange handles the object of key (nil when it no longer exists)
	// and returns it as it left it, or nil for unchanged.
	OnChange(key string, obj runtime.Object) (runtime.Object, error)
}

// SharedHandlerFunc adapts a function to SharedHandler.
type SharedHandlerFunc func(key string, obj runtime.Object) (runtime.Object, error)

// OnChange calls f.
func (f SharedHandlerFunc) OnChange(key string, obj runtime.Object) (runtime.Object, error) {
	return f(key, obj)
}

// HandlerError is one handler's failure. A key's combined error joins one
// per failed handler, so errors.As(err, &*HandlerError) finds them and
// errors.Is reaches each cause.
type HandlerError struct {
	Handler string
	Err     error
}

// Error names the handler and its error.
func (e *HandlerError) Error() string { return "handler " + e.Handler + ": " + e.Err.Error() }

// Unwrap returns the handler's own error.
func (e *HandlerError) Unwrap() error { return e.Err }

// SharedController is the one controller of a kind, shared by every handler
// registered for it.
type SharedController interface {
	Controller
	// RegisterHandler adds a named handler, run after those registered
	// before it, until ctx ends. Registered after Start, it is given every
	// cached key at once.
	RegisterHandler(ctx context.Context, name string, handler SharedHandler)
	// GroupVersionKind returns the controller's kind.
	GroupVersionKind() schema.GroupVersionKind
	// Client returns the kind's client; it fails while the kind's resource
	// cannot be resolved (its CRD is not installed).
	Client() (*client.Client, error)
}

type sharedController struct {
	*controller
	gvk       schema.GroupVersionKind
	handlers  *sharedHandler
	getClient func() (*client.Client, error)
}

func (s *sharedController) GroupVersionKind() schema.GroupVersionKind { return s.gvk }

func (s *sharedController) Client() (*client.Client, error) { return s.getClient() }

func (s *sharedController) RegisterHandler(ctx context.Context, name string, handler SharedHandler) {
	id := s.handlers.add(name, handler)
	context.AfterFunc(ctx, func() { s.handlers.remove(id) })
	s.startLock.Lock()
	running := s.queue != nil && s.runCtx.Err() == nil
	s.startLock.Unlock()
	if running {
		// The new handler has seen none of the existing objects. (A
		// stopped controller handles every key when it starts again.)
		for _, key := range s.informer.GetStore().ListKeys() {
			s.add(startKey{key: key, priority: workqueue.Low})
		}
	}
}

// sharedHandler runs named handlers in registration order.
type sharedHandler struct {
	gvk     string
	metrics *Metrics
	own     ownWrites

	mu       sync.RWMutex
	nextID   int
	handlers []namedHandler
}

type namedHandler struct {
	id      int
	name    string
	handler SharedHandler
}

func (h *sharedHandler) add(name string, handler SharedHandler) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	// Copy on write: run iterates a snapshot without holding the lock.
	h.handlers = append(h.handlers[:len(h.handlers):len(h.handlers)], namedHandler{id: h.nextID, name: name, handler: handler})
	return h.nextID
}

func (h *sharedHandler) remove(id int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kept := make([]namedHandler, 0, len(h.handlers))
	for _, nh := range h.handlers {
		if nh.id != id {
			kept = append(kept, nh)
		}
	}
	h.handlers = kept
}

// OnChange makes sharedHandler a Handler; the controller calls run instead
// so that each handler is timed and recovered on its own.
func (h *sharedHandler) OnChange(key string, obj runtime.Object) error {
	_, err := h.run(key, obj, nil)
	return err
}

// run calls every handler, even after one fails, passing each the object the
// previous one returned, and joins their errors. ErrIgnore is dropped. It
// also returns the writes: the handlers that returned the object with a new
// resourceVersion. The object the last write left behind is remembered, so
// that no pass starts from an older cached copy (see ownWrites). running,
// when set, is told each handler's name before it is called.
func (h *sharedHandler) run(key string, obj runtime.Object, running func(name string)) ([]write, error) {
	h.mu.RLock()
	handlers := h.handlers
	h.mu.RUnlock()
	var errs []error
	var writes []write
	given := obj
	for _, nh := range handlers {
		var next runtime.Object
		if running != nil {
			running(nh.name)
		}
		err := callHandler(h.metrics, h.gvk, nh.name, func() (err error) {
			next, err = nh.handler.OnChange(key, obj)
			return err
		})
		if err != nil && !errors.Is(err, ErrIgnore) {
			errs = append(errs, &HandlerError{Handler: nh.name, Err: err})
		}
		if passedOn(next) {
			if obj != nil {
				if rv := resourceVersion(next); rv != "" && rv != resourceVersion(obj) {
					writes = append(writes, write{handler: nh.name, resourceVersion: rv})
				}
			}
			obj = next
		}
	}
	if obj != given {
		h.own.wrote(key, given, obj)
	}
	return writes, errors.Join(errs...)
}

// passedOn reports whether a handler's returned object replaces the one the
// next handler gets. As on lasso, nil and an object without a UID do not: a
// handler returning a placeholder (&v1.ConfigMap{}) must not hide the real
// object from the handlers after it, nor turn a deletion's nil into an
// object. An object without metadata is passed on.
func passedOn(next runtime.Object) bool {
	if next == nil || isNilPointer(next) {
		return false
	}
	m, err := meta.Accessor(next)
	return err != nil || m.GetUID() != ""
}

// isNilPointer catches a typed nil (a (*Pod)(nil) in a runtime.Object),
// which handlers return for "nothing to pass on".
func isNilPointer(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
