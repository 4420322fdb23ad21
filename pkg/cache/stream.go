package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// initialStream hands the objects of a stream of initial events
// (watch-list) to an informer's handlers as they arrive
// (Options.StreamInitialList), where client-go's reflector hands the
// informer nothing until the end bookmark, and then the whole list at once.
//
// The informer's store still gets the list the way client-go gives it (one
// Replace at the bookmark), so HasSynced still means the whole list is in
// and a List before it still fails with NotSyncedError. Each handler is
// wrapped (earlyHandler) so that the Replace does not hand it again what it
// was already given.
type initialStream struct {
	// transform is the kind's transform before compaction (strip and the
	// user's); it runs once per object, in the stream.
	transform cache.TransformFunc
	// codec is the compact informer's, else nil.
	codec *codec
	// marked maps each object the stream transformed to what the store
	// is to hold (the object, or its compact form), until the informer
	// has synced: transforming it again would write to objects handlers
	// are reading, and encoding it again would cost as much once more.
	marked sync.Map
	// feeding reports whether the informer's handlers are to be fed early
	// now (a first run that has not synced), and deliver hands them an
	// object; both are set by the restartableInformer. A stream that
	// starts when they are not passes through untouched.
	feeding func() bool
	deliver func(obj any, stream uint64)
	// gone tells the handlers given the object of key early that the
	// stream passed its deletion (set by the restartableInformer too).
	gone func(key string, stream uint64)
	// started says a stream began, and broke that it ended before its
	// bookmark (set by the restartableInformer too): reads answer from the
	// newest stream alone, and from none that broke, since nothing kept
	// what a broken stream handed out current (the reflector lists again
	// from the start, and an object may have gone meanwhile).
	started, broke func(stream uint64)
	// begun waits until the handlers were first called with what the
	// stream handed them (set by the restartableInformer too).
	begun func(ctx context.Context)
	// streams numbers the streams, for their marks.
	streams atomic.Uint64
}

// mark is what the store is to hold for a streamed object, and which
// stream marked it.
type mark struct {
	stored any
	stream uint64
}

// informerTransform returns the informer's transform: full for objects the
// stream did not transform, what the stream made of them for those it did.
func (s *initialStream) informerTransform(full cache.TransformFunc) cache.TransformFunc {
	if s == nil {
		return full
	}
	return func(obj any) (any, error) {
		// client-go transforms each object of a stream twice (when it
		// collects it, and again in the Replace). The second time, a
		// compact cache's transform is given the compact form, which it
		// passes through, so its mark goes at once: keeping it would keep
		// every decoded object alive until the sync. Other marks stay
		// until the informer has synced (clearMarks).
		m, ok := s.marked.Load(obj)
		if ok && s.codec != nil {
			s.marked.Delete(obj)
		}
		if ok {
			return m.(mark).stored, nil
		}
		if full == nil {
			return obj, nil
		}
		return full(obj)
	}
}

// clearMarks forgets every mark once the informer has synced, when no
// marked object is transformed again.
func (s *initialStream) clearMarks() { s.marked.Clear() }

// streamWatch passes a stream of initial events on to the reflector,
// handing each object to the handlers first.
type streamWatch struct {
	s      *initialStream
	id     uint64
	in     watch.Interface
	out    chan watch.Event
	cancel context.CancelFunc
}

func newStreamWatch(ctx context.Context, s *initialStream, in watch.Interface) watch.Interface {
	if s.feeding == nil || !s.feeding() {
		return in
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &streamWatch{s: s, id: s.streams.Add(1), in: in, out: make(chan watch.Event), cancel: cancel}
	if s.started != nil {
		s.started(w.id)
	}
	go w.loop(ctx)
	return w
}

func (w *streamWatch) loop(ctx context.Context) {
	defer close(w.out)
	defer w.in.Stop()
	ended := false
	defer func() {
		if !ended {
			// The reflector drops what it collected: nothing will come to
			// the informer's transform for this stream's marks. (Holding
			// the marked objects in a list of the stream's own, to delete
			// them, would keep every decoded object of a compact cache
			// alive until the bookmark.)
			w.s.marked.Range(func(obj, m any) bool {
				if m.(mark).stream == w.id {
					w.s.marked.Delete(obj)
				}
				return true
			})
			// Before the reflector sees the end (and asks for a new
			// stream): reads answer nothing of this stream from now on.
			if w.s.broke != nil {
				w.s.broke(w.id)
			}
		}
	}()
	for {
		var e watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case e, ok = <-w.in.ResultChan():
			if !ok {
				return
			}
		}
		switch {
		case ended:
		case e.Type == watch.Added || e.Type == watch.Modified:
			// Where the server lacks watch-list, the stream is a plain
			// watch: it passes changes too, which the handlers and
			// GetStreamed follow.
			if obj, err := w.early(e.Object); err == nil {
				e.Object = obj
			}
		case e.Type == watch.Deleted:
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(e.Object); err == nil && w.s.gone != nil {
				w.s.gone(key, w.id)
			}
		case e.Type == watch.Bookmark && isInitialEventsEnd(e.Object):
			ended = true
			// The handlers are given the stream's objects by goroutines
			// of their own: the list goes in once each has begun.
			if w.s.begun != nil {
				w.s.begun(ctx)
			}
		}
		select {
		case w.out <- e:
		case <-ctx.Done():
			return
		}
	}
}

// early transforms obj, marks it and hands it to the handlers.
func (w *streamWatch) early(obj runtime.Object) (runtime.Object, error) {
	if w.s.transform != nil {
		t, err := w.s.transform(obj)
		if err != nil {
			return nil, err
		}
		o, ok := t.(runtime.Object)
		if !ok {
			return nil, fmt.Errorf("cache: the transform returned a %T", t)
		}
		obj = o
	}
	// A compact cache's handlers are given the compact form, which the
	// store holds too (and they decode): holding the decoded objects
	// until the Replace would raise the cold start's peak heap.
	var stored any = obj
	if w.s.codec != nil {
		var err error
		if stored, err = w.s.codec.compacting(nil)(obj); err != nil {
			return nil, err
		}
	}
	w.s.marked.Store(obj, mark{stored: stored, stream: w.id})
	w.s.deliver(stored, w.id)
	return obj, nil
}

func isInitialEventsEnd(obj any) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// ResultChan is what the reflector reads.
func (w *streamWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop ends the stream.
func (w *streamWatch) Stop() { w.cancel() }
