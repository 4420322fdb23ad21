package cache

import (
	"cmp"
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// What an informer asks the API server: its lists and watches, with the
// kind's selectors, retried when the failure is transient, and (with a
// kindHealth) watches that end at once when their connection breaks.

// listFunc is an informer's list of the kind: into a new copy of list, a
// consistent list rather than one at any resourceVersion, failures
// recorded in h (when not nil) and transient ones retried.
func listFunc(list runtime.Object, getClient ClientFunc, opts Options, h *kindHealth) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
		opts.apply(&lo)
		consistent(&lo)
		verb := "list"
		if lo.Continue != "" {
			verb = "list page"
		}
		return retryTransient(ctx, h, verb, func() (runtime.Object, error) {
			c, err := getClient()
			if err != nil {
				return nil, &clientError{err}
			}
			result := opts.listInto(list.DeepCopyObject()) // after getClient
			return result, opts.list(ctx, c, result, lo)
		})
	}
}

// watchFunc is an informer's watch of the kind, transient failures
// retried. With h, a kind that was found to lack watch-list lists at once
// instead, and the watch is a health watch: it records failures in h and
// resumes a broken stream (see newHealthWatch), handing the initial
// events to opts.stream when it has one.
func watchFunc(getClient ClientFunc, opts Options, h *kindHealth) func(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
		opts.apply(&lo)
		initialEvents := lo.SendInitialEvents != nil && *lo.SendInitialEvents
		if initialEvents && h != nil && h.lacksWatchList.Load() {
			// Found out before: the reflector lists at once instead.
			return nil, errNoWatchList()
		}
		w, err := retryTransient(ctx, h, "watch", func() (watch.Interface, error) {
			c, err := getClient()
			if err != nil {
				return nil, &clientError{err}
			}
			return opts.watch(ctx, c, lo)
		})
		if err != nil || h == nil {
			return w, err
		}
		// A broken stream resumes as a plain watch from the last
		// resourceVersion seen; a stream of initial events (watch-list)
		// only once they have all arrived.
		resume := func(ctx context.Context, resourceVersion string) (watch.Interface, error) {
			c, err := getClient()
			if err != nil {
				return nil, &clientError{err}
			}
			o := lo
			o.ResourceVersion, o.SendInitialEvents, o.ResourceVersionMatch = resourceVersion, nil, ""
			return opts.watch(ctx, c, o)
		}
		quiet := cmp.Or(opts.InitialEventsTimeout, DefaultInitialEventsTimeout)
		hw := newHealthWatch(ctx, w, h, lo.ResourceVersion, !initialEvents, quiet, resume)
		if initialEvents && opts.stream != nil {
			return newStreamWatch(ctx, opts.stream, hw), nil
		}
		return hw, nil
	}
}

// consistent turns a list at resourceVersion "0" (any version, which the
// reflector asks for when it has none, as a new or rebuilt informer does)
// into a consistent list (""): behind several API servers, "0" may be
// answered from a watch cache lagging behind the state this informer, or
// the one it was rebuilt from, already had, and the cache would go back in
// time. The API server serves consistent lists from its watch cache once
// that has caught up, so they cost little more. A list at a given
// resourceVersion (a relist after a watch ended) is never older than it,
// and is left alone.
func consistent(lo *metav1.ListOptions) {
	if lo.ResourceVersion == "0" && lo.Continue == "" {
		lo.ResourceVersion = ""
		lo.ResourceVersionMatch = ""
	}
}

func (o Options) apply(lo *metav1.ListOptions) {
	if o.LabelSelector != "" {
		lo.LabelSelector = o.LabelSelector
	}
	if o.FieldSelector != "" {
		lo.FieldSelector = o.FieldSelector
	}
}
