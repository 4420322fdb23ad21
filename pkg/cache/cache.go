// Package cache builds client-go SharedIndexInformers over Lariat clients and
// shares them: SharedCacheFactory keeps one informer per kind, created the
// first time a kind is asked for and started by Start, which may be called
// again for kinds registered later.
//
// Informers here are lean by default: managedFields are dropped before
// objects are stored, which for objects written by server-side apply roughly
// halves the cache's memory. That costs nothing on write-back: an Update
// that omits managedFields leaves the server's unchanged. A kind opts out
// with Options.KeepAllMetadata.
//
// The kubectl.kubernetes.io/last-applied-configuration annotation is kept by
// default, because an Update of an object read from the cache (copy, modify,
// update) would delete it from the server, and later kubectl apply runs could
// no longer remove fields. Options.StripLastApplied drops it too, for kinds
// the operator never writes with Update.
//
// Options.Compact goes further, for kinds with many or large objects: the
// informer stores each object encoded (protobuf for built-in kinds, JSON for
// the others), about a seventh of its size as Go structs for a typical Pod,
// and decodes it when it is read; the objects read most recently stay
// decoded, so a handler's Get of the key it was given costs a map lookup.
// Readers always get the whole object.
//
// Options.MetadataOnly holds less still, for kinds a controller only owns
// or relates to: the informer lists and watches the objects' metadata
// (metav1.PartialObjectMetadata), and SharedCacheFactory.GetFull reads a
// whole object through from the API server when a handler needs it.
//
// Informers list with a stream of initial events (watch-list) where the API
// server has it; a kind whose server never ends the stream with its
// bookmark lists instead (Options.InitialEventsTimeout, Options.NoWatchList).
// Options.StreamInitialList hands the first list's objects to handlers as
// they stream in, while HasSynced still waits for the whole list.
//
// A factory can be started again after its context ended, and its
// informers are back within about a second of the API server answering
// again, however often it restarted (see SharedCacheFactory.Start and
// KindHealth).
package cache

import (
	"fmt"
	"maps"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/client"
)

// Options configure the informer of one kind.
type Options struct {
	// Namespace limits the informer to one namespace; empty means all.
	Namespace string
	// LabelSelector and FieldSelector limit which objects are listed and
	// watched, in the API's selector syntax.
	LabelSelector string
	FieldSelector string
	// Resync is how often every cached object is handed to handlers again;
	// zero means never.
	Resync time.Duration
	// Indexers are added to the informer's store before it starts. A
	// panic of one is logged with the object's key and the stack, and the
	// object is indexed under no value of that index (client-go would end
	// the process); so is one of an index AddIndexers adds to a
	// SharedCacheFactory's informer. Neither may call runtime.Goexit: it
	// ends the informer's goroutine, and the cache then takes no later
	// change of the kind (logged at error level, nothing more).
	Indexers cache.Indexers
	// Transform runs on every object before it is stored, after the lean
	// transform unless KeepAllMetadata is set. A panic of it is logged
	// with the object's key and the stack, and the object is stored as it
	// came, untransformed: a watch event is never dropped for it (the
	// cache would keep a deleted object), nor a list failed. It may not
	// call runtime.Goexit, as the Indexers may not.
	Transform cache.TransformFunc
	// KeepAllMetadata stores objects as the API server sent them, with
	// managedFields (and the last-applied annotation, even when
	// StripLastApplied is set).
	KeepAllMetadata bool
	// StripLastApplied also drops the last-applied-configuration
	// annotation, which kubectl apply makes as large as the object. Set it
	// only for kinds this operator never writes with Update: an Update of
	// an object read from such a cache deletes the annotation from the
	// server, and later kubectl apply runs can no longer remove fields.
	// Patches and server-side apply are safe.
	StripLastApplied bool
	// Compact stores each object encoded (protobuf for built-in kinds, JSON
	// for the others) instead of as Go structs, which for typical objects
	// holds a third to a quarter of the memory, compressed (S2) when that
	// saves an eighth or more (text, such as ConfigMaps' configuration and
	// Pods' names, images and env variables, typically does; random bytes do
	// not, and stay as they are), and decodes it when it is
	// read: by a handler, a Get or List of the informer's store, an index
	// function. Readers get the whole object, as without Compact; the
	// HotObjects most recently read stay decoded, so reading a key again
	// soon costs a map lookup, and any other read costs a decode. Each
	// object's namespace and labels are kept beside it, so the namespace
	// index and a List by label selector (SelectingIndexer, which
	// pkg/generic's typed caches use) decode only the objects returned; a
	// List of everything decodes every object, so kinds listed whole on
	// every pass are better left decoded. Only informers of a
	// SharedCacheFactory can be compact.
	Compact bool
	// InternStrings makes the objects an informer of a SharedCacheFactory
	// stores share one copy of each string up to 128 bytes long seen before
	// in the kind's objects (images, env variables, label keys and values,
	// paths; map values, not keys; not names, UIDs and resourceVersions,
	// each object's own), in a table of up to 32,768 strings per informer
	// that keeps what it holds. For Pods made from a few templates it holds
	// about a ninth less heap, for a walk of each object as it is stored
	// (about 15 µs of CPU per Pod); for ConfigMaps, whose strings are mostly
	// their own, it saves nothing. Readers see the same values either way,
	// and sharing never extends to maps or slices. Compact and
	// KeepAllMetadata informers do not intern. docs/benchmarks.md has the
	// measurements.
	InternStrings bool
	// HotObjects is how many decoded objects a compact informer keeps
	// (DefaultHotObjects when zero).
	HotObjects int

	// NoWatchList makes the informer list (in pages) instead of asking for
	// a stream of initial events (watch-list), for servers known to lack
	// it. Informers of a SharedCacheFactory find that out on their own
	// (see InitialEventsTimeout); this saves them the first attempt.
	NoWatchList bool
	// InitialEventsTimeout is how long a stream of initial events may go
	// without an event and without the bookmark that ends it before the
	// kind is taken to lack watch-list: the informer then lists, now and
	// for every later list of that kind (DefaultInitialEventsTimeout when
	// zero). A server that has watch-list sends the bookmark right after
	// the last object, so only a server that lacks it is ever that quiet
	// during the stream; client-go would wait for the bookmark until the
	// watch times out, minutes later, and then ask again.
	InitialEventsTimeout time.Duration

	// StreamInitialList hands the objects of the first list to handlers
	// as they arrive, where client-go hands them all at once when the list
	// is complete (for 10,000 objects, seconds after the first one). The
	// list still counts as in (HasSynced) only when complete, and a List
	// before that still fails with NotSyncedError; a handler is given each
	// object once (an add of the initial list), an update when the object
	// changed while a broken stream was listed again, and a delete for one
	// it was given that went away meanwhile (a broken stream listed again,
	// or a factory stopped before the sync and started again). Only lists
	// by watch-list stream; only an informer's first run (after a restart,
	// handlers know the objects already; what a first run stopped before
	// its sync handed out is settled by the next run's list); only
	// informers of a SharedCacheFactory. Each handler is given the
	// stream's objects by a goroutine of its own, through a queue, as
	// client-go gives it the informer's events: a slow handler holds up
	// neither the list, the sync, reads nor the other handlers (the list
	// goes in once every handler has begun on the stream, never waiting
	// for a call to return). Before the sync, GetStreamed (StreamReader)
	// and pkg/generic's typed Get answer for the objects streamed so far,
	// so pkg/controller starts the kind's workers at once rather than at
	// the sync; once the run's context ended, they answer nothing from the
	// stream (a NotSyncedError), and once a stream broke nothing from it:
	// only what the stream listing again has handed out.
	StreamInitialList bool

	// MetadataOnly makes the informer list and watch the kind's objects'
	// metadata alone (metav1.PartialObjectMetadata, through client-go's
	// metadata client), for kinds a controller only owns or relates to:
	// no spec, no status, no data is ever held. The store, List and
	// handlers give *metav1.PartialObjectMetadata stamped with the kind's
	// apiVersion and kind; SharedCacheFactory.GetFull reads the whole
	// object from the API server for the few handlers that need it.
	// pkg/generic refuses a typed controller of such a kind, whose
	// handlers would otherwise be given objects without their spec. Only
	// informers of a SharedCacheFactory; Compact, InternStrings and
	// StreamInitialList are ignored for such a kind.
	MetadataOnly bool
	// FullObjects is how many whole objects GetFull keeps for a
	// MetadataOnly kind (DefaultFullObjects when zero).
	FullObjects int

	// codec is the compact informer's, shared by its runs.
	codec *codec
	// interner is the informer's table of shared strings, shared by its
	// runs and its stream of initial events (intern.go).
	interner *interner
	// stream is the informer's when StreamInitialList is set.
	stream *initialStream
	// meta lists and watches a MetadataOnly informer's kind.
	meta *metaLister
	// wire says the compact informer's watch events and lists' items come
	// as wireObjects (compact_wire*.go): its reflector checks no type, as
	// bookmarks and objects it does not recognize come decoded.
	wire bool
	// log receives the panics of the user's Transform and Indexers (see
	// safeTransform); nil means logrus's standard logger.
	log logrus.FieldLogger
}

// KindOptions override the default Options for one kind. Fields are
// pointers so that a kind can say "not this": a set field replaces the
// default's value even with an empty one, a nil field takes the default's.
// With k8s.io/utils/ptr, Namespace: ptr.To("") watches all namespaces
// although the default names one, LabelSelector: ptr.To("") drops the
// default's selector, Resync: ptr.To(time.Duration(0)) turns resync off, and
// StripLastApplied: ptr.To(false) keeps what the default strips.
type KindOptions struct {
	// Namespace limits the informer to one namespace; "" means all.
	Namespace *string
	// LabelSelector and FieldSelector limit which objects are listed and
	// watched, in the API's selector syntax; "" selects everything.
	LabelSelector *string
	FieldSelector *string
	// Resync is how often every cached object is handed to handlers again;
	// zero means never.
	Resync *time.Duration
	// Indexers are added to the default's (an index of the same name
	// replaces the default's).
	Indexers cache.Indexers
	// Transform replaces the default's transform when not nil. A kind that
	// wants none of the default's sets a function that returns its
	// argument.
	Transform cache.TransformFunc
	// KeepAllMetadata and StripLastApplied are Options' flags of the same
	// name, for this kind.
	KeepAllMetadata  *bool
	StripLastApplied *bool
	// Compact and HotObjects are Options' fields of the same name, for
	// this kind.
	Compact    *bool
	HotObjects *int
	// InternStrings is Options' field of the same name, for this kind.
	InternStrings *bool
	// NoWatchList and InitialEventsTimeout are Options' fields of the same
	// name, for this kind.
	NoWatchList          *bool
	InitialEventsTimeout *time.Duration
	// StreamInitialList is Options' field of the same name, for this kind.
	StreamInitialList *bool
	// MetadataOnly and FullObjects are Options' fields of the same name,
	// for this kind.
	MetadataOnly *bool
	FullObjects  *int
}

// over returns defaults with o's set fields in their place.
func (o KindOptions) over(defaults Options) Options {
	out := defaults
	setIf(&out.Namespace, o.Namespace)
	setIf(&out.LabelSelector, o.LabelSelector)
	setIf(&out.FieldSelector, o.FieldSelector)
	setIf(&out.Resync, o.Resync)
	setIf(&out.KeepAllMetadata, o.KeepAllMetadata)
	setIf(&out.StripLastApplied, o.StripLastApplied)
	setIf(&out.Compact, o.Compact)
	setIf(&out.HotObjects, o.HotObjects)
	setIf(&out.InternStrings, o.InternStrings)
	setIf(&out.NoWatchList, o.NoWatchList)
	setIf(&out.InitialEventsTimeout, o.InitialEventsTimeout)
	setIf(&out.StreamInitialList, o.StreamInitialList)
	setIf(&out.MetadataOnly, o.MetadataOnly)
	setIf(&out.FullObjects, o.FullObjects)
	if len(o.Indexers) > 0 {
		out.Indexers = maps.Clone(defaults.Indexers)
		if out.Indexers == nil {
			out.Indexers = cache.Indexers{}
		}
		maps.Copy(out.Indexers, o.Indexers)
	}
	if o.Transform != nil {
		out.Transform = o.Transform
	}
	return out
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// ClientFunc returns the client an informer lists and watches with. It is
// called on every list, so a kind whose resource cannot be resolved yet (its
// CRD is not installed) starts working once it can.
type ClientFunc func() (*client.Client, error)

// NewInformer returns an informer for objects like obj (list is the matching
// list type) that lists and watches through the client getClient returns.
//
// Lists and watches that fail because the API server is away (connection
// refused, 503, 429, timeouts) are retried within a second or so, instead
// of behind client-go's reflector backoff.
func NewInformer(obj, list runtime.Object, getClient ClientFunc, opts Options) (cache.SharedIndexInformer, error) {
	if opts.Compact {
		return nil, fmt.Errorf("cache: Options.Compact needs a SharedCacheFactory's informer, which decodes what it stores")
	}
	if opts.StreamInitialList {
		return nil, fmt.Errorf("cache: Options.StreamInitialList needs a SharedCacheFactory's informer, which wraps its handlers")
	}
	if opts.MetadataOnly {
		return nil, fmt.Errorf("cache: Options.MetadataOnly needs a SharedCacheFactory's informer, which knows the kind")
	}
	opts.Indexers = safeIndexers(opts.Indexers, opts.logger())
	return newInformer(obj, list, getClient, opts, nil)
}

// newInformer is NewInformer recording failures in h, when not nil, whose
// watches also end at once when their connection breaks and rebuild the
// informer when they are too old.
func newInformer(obj, list runtime.Object, getClient ClientFunc, opts Options, h *kindHealth) (cache.SharedIndexInformer, error) {
	lw := &cache.ListWatch{
		ListWithContextFunc:  listFunc(list, getClient, opts, h),
		WatchFuncWithContext: watchFunc(getClient, opts, h),
	}
	// client-go keeps the map it is given and adds later indexers to it:
	// each informer needs its own (a nil map would make AddIndexers panic,
	// a shared default would be written by every kind).
	// A compact informer's indexers come in the stored form's
	// (decodingIndexers): wrapped once when given, not on each run.
	indexers := cache.Indexers{}
	maps.Copy(indexers, opts.Indexers)
	var listerWatcher cache.ListerWatcher = lw
	if opts.NoWatchList {
		listerWatcher = listOnly{lw}
	}
	example, description := obj, ""
	if opts.wire {
		// Logs and errors still name the kind, not "<unspecified>".
		example, description = nil, fmt.Sprintf("%T", obj)
	}
	informer := cache.NewSharedIndexInformerWithOptions(listerWatcher, example, cache.SharedIndexInformerOptions{
		ResyncPeriod:      opts.Resync,
		Indexers:          indexers,
		ObjectDescription: description,
	})
	if transform := opts.stream.informerTransform(opts.codec.compacting(opts.transform())); transform != nil {
		if err := informer.SetTransform(transform); err != nil {
			return nil, fmt.Errorf("set transform: %w", err)
		}
	}
	return informer, nil
}
