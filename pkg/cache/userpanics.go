package cache

import (
	"runtime/debug"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/internal/panicvalue"
)

// safeTransform returns fn, a user's transform, with its panics
// recovered: the informer calls it on every object of its lists and
// watch events, in the reflector's goroutine, where a panic ends the
// process. The object is then stored as it came (whatever fn changed of
// it before it panicked) and the panic logged with the object's key and
// the stack. Stored rather than refused: client-go drops a watch event
// whose transform failed (the cache would keep an object the server
// deleted, or an old version of it) and fails a whole list for it.
func safeTransform(fn cache.TransformFunc, log logrus.FieldLogger) cache.TransformFunc {
	if fn == nil {
		return nil
	}
	return func(obj any) (out any, err error) {
		out = obj // what is stored if fn panics
		guarded(log, obj, "transform", "the object is stored untransformed", func() { out, err = fn(obj) })
		return out, err
	}
}

// safeIndexers returns indexers, users' index functions, with their
// panics recovered: the store calls them on every object it stores, in
// the informer's goroutine, where a panic ends the process. The object is
// then indexed under no value of that index, and the panic logged with
// its key and the stack: an error would not do, client-go panics on an
// index function's error itself. client-go's namespace index function
// stays as it is (it cannot panic, and a compact cache recognizes it).
func safeIndexers(indexers cache.Indexers, log logrus.FieldLogger) cache.Indexers {
	if indexers == nil {
		return nil
	}
	out := make(cache.Indexers, len(indexers))
	for name, fn := range indexers {
		if fn == nil || readsOnlyNamespace(fn) {
			out[name] = fn
			continue
		}
		ilog := log.WithField("index", name) // once, not on every call
		out[name] = func(obj any) (values []string, err error) {
			// Indexed under no value of it if fn panics.
			guarded(ilog, obj, "index function", "the object is indexed under no value of it",
				func() { values, err = fn(obj) })
			return values, err
		}
	}
	return out
}

// guarded runs call, user code the informer's goroutine calls on obj
// (what), and recovers its panic, logged with obj's key, what happens
// instead and the stack. A runtime.Goexit cannot be stopped: it ends the
// informer's goroutine, client-go does not start it again, and the cache
// takes no later change of the kind; the error line is all that tells it.
func guarded(log logrus.FieldLogger, obj any, what, instead string, call func()) {
	returned := false
	defer func() {
		r := recover()
		if r == nil && returned {
			return
		}
		key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if r != nil {
			log.WithField("key", key).Errorf("%s panicked, %s: %s\n%s", what, instead, panicvalue.String(r), debug.Stack())
			return
		}
		log.WithField("key", key).Errorf("%s ended the informer's goroutine (runtime.Goexit): the cache takes no later change of the kind\n%s", what, debug.Stack())
	}()
	call()
	returned = true
}

// logger is the log of o's informer: its factory's, for the kind, or
// logrus's standard logger for one made by NewInformer.
func (o Options) logger() logrus.FieldLogger {
	if o.log != nil {
		return o.log
	}
	return logrus.StandardLogger()
}
