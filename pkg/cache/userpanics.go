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
		returned := false
		defer func() {
			if r := recover(); r != nil {
				key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
				log.WithField("key", key).Errorf("transform panicked, the object is stored untransformed: %s\n%s", panicvalue.String(r), debug.Stack())
				out, err = obj, nil
			} else if !returned {
				exitedLog(log, obj, "transform")
			}
		}()
		out, err = fn(obj)
		returned = true
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
		out[name] = func(obj any) (values []string, err error) {
			returned := false
			defer func() {
				if r := recover(); r != nil {
					key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
					log.WithField("key", key).WithField("index", name).
						Errorf("index function panicked, the object is indexed under no value of it: %s\n%s", panicvalue.String(r), debug.Stack())
					values, err = nil, nil
				} else if !returned {
					exitedLog(log.WithField("index", name), obj, "index function")
				}
			}()
			values, err = fn(obj)
			returned = true
			return values, err
		}
	}
	return out
}

// exitedLog says that what, user code called on obj, ended the
// informer's goroutine with runtime.Goexit: no recover can stop that, and
// client-go does not start the goroutine again, so the cache takes no
// later change of the kind; this line is all that tells it.
func exitedLog(log logrus.FieldLogger, obj any, what string) {
	key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	log.WithField("key", key).Errorf("%s ended the informer's goroutine (runtime.Goexit): the cache takes no later change of the kind\n%s", what, debug.Stack())
}

// logger is the log of o's informer: its factory's, for the kind, or
// logrus's standard logger for one made by NewInformer.
func (o Options) logger() logrus.FieldLogger {
	if o.log != nil {
		return o.log
	}
	return logrus.StandardLogger()
}
