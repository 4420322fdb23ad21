package kubedescriptor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

const (
	// LabelManagedBy marks the objects a descriptor manages; its value is
	// the field manager. Retrieve lists by it, so only objects the
	// descriptor wrote are ever reported to (and deleted by) the scheduler.
	LabelManagedBy = "lariat.dev/managed-by"
	// AnnotationDependsOn lists, comma separated, the keys of the values
	// an object depends on.
	AnnotationDependsOn = "lariat.dev/depends-on"
	// AnnotationOrderedAfter lists, comma separated, the keys of the
	// values an object is created after, by ordering-only dependencies
	// (kvscheduler.OrderingOnly): it stays when they go.
	AnnotationOrderedAfter = "lariat.dev/ordered-after"
	// DefaultTimeout bounds each request when Options.Timeout is zero: a
	// request the server never answers would otherwise stall the
	// scheduler's only goroutine until the callback's context ends, which
	// for work no caller waits for (retries, NonBlocking transactions) is
	// only when the scheduler closes.
	DefaultTimeout = 30 * time.Second
)

// Options configure a descriptor.
type Options struct {
	// Clients talks to the API server; required.
	Clients *client.SharedClientFactory
	// Cache, when set, serves Retrieve from the kind's informer instead of
	// a List request. The caller starts the factory (Start) and waits for
	// its sync after New has created the informer; until the informer has
	// synced, Retrieve fails (the scheduler then applies none of the
	// kind's operations). A cache that lags behind makes a resync see an
	// older state, which the next resync corrects.
	Cache *cache.SharedCacheFactory
	// FieldManager owns the applied fields and is the value of
	// LabelManagedBy; required, and must be a valid label value. Two
	// schedulers must not share one for the same objects (kind and
	// Namespace): each would delete the other's objects on resync.
	FieldManager string
	// Namespace limits Retrieve of a namespaced kind to one namespace;
	// empty means all. Values in other namespaces can still be applied
	// but are not retrieved. Cluster-scoped kinds ignore it.
	Namespace string
	// Timeout bounds each request; zero or less means DefaultTimeout.
	// Requests also end with the context of the callback that makes them
	// (Create, Update, Delete, Retrieve, RetrieveKeys): the Commit's, so
	// that a caller who gives up ends the request in flight, or the
	// scheduler's lifetime context.
	Timeout time.Duration
	// Context bounds the only requests made outside those callbacks,
	// which get no context: the server-side dry runs of the value
	// comparator (for an object applied before a restart, once per
	// object) and, with RecreateOnImmutable, of UpdateWithRecreate. Pass
	// the scheduler's Context(), so that Close ends such a request instead
	// of waiting for it (up to Timeout). Nil means they are bounded by
	// Timeout alone.
	Context context.Context
	// RecreateOnImmutable makes a change the server rejects because it
	// touches an immutable field (a Deployment's selector, the data of an
	// immutable ConfigMap) a delete and create instead of a failed update.
	// Every change then costs a server-side dry-run apply first, which is
	// why it is off by default.
	RecreateOnImmutable bool
	// PropagationPolicy is how deletes treat the object's dependents; nil
	// means background, so a Job's pods or a Deployment's ReplicaSets go
	// with it (some kinds, such as batch/v1 Jobs, would otherwise orphan
	// them).
	PropagationPolicy *metav1.DeletionPropagation
	// Adopt lets a value take over an existing object that this field
	// manager did not create (no LabelManagedBy of its own). Without it,
	// such a value fails with a *NotManagedError and the object is left
	// as it is: a forced apply would silently take over fields another
	// owner set.
	Adopt bool
	// Landings, when set, records where the server holds what the
	// descriptor wanted of each object (see Landings): the object each
	// apply returned, and each live object Retrieve finds in sync with its
	// desired value. Several descriptors may share one.
	Landings *Landings
	// Logger, when set, is told (once per object) of each object found
	// carrying LabelManagedBy of FieldManager that the descriptor did not
	// apply (see AnnotationAppliedAs): a copy of one of its objects, which
	// it leaves alone.
	Logger *logrus.Logger
}

// NotManagedError is the failure of a value whose object exists but was
// not created by the descriptor's field manager (and Options.Adopt is off).
type NotManagedError struct {
	// Key is the value's key; ManagedBy the object's LabelManagedBy
	// ("" when absent) and FieldManager the descriptor's.
	Key, ManagedBy, FieldManager string
	// Copy is set when the object carries the field manager's label but
	// was not applied by it (see AnnotationAppliedAs): a copy of one of
	// its objects.
	Copy bool
}

// Error says whose the object is.
func (e *NotManagedError) Error() string {
	if e.Copy {
		// Labelling it would not help: the label is what it already has.
		return fmt.Sprintf("kubedescriptor: %s exists and is not managed by %s (it carries its label but not its stamp %s: a copy of one of its objects); "+
			"delete it or set Options.Adopt to take it over", e.Key, e.FieldManager, AnnotationAppliedAs)
	}
	by := "nobody's label"
	if e.ManagedBy != "" {
		by = "the label of " + e.ManagedBy
	}
	return fmt.Sprintf("kubedescriptor: %s exists and is not managed by %s (it carries %s); "+
		"delete it, label it %s=%s, or set Options.Adopt to take it over", e.Key, e.FieldManager, by, LabelManagedBy, e.FieldManager)
}

// kind is the state of one descriptor.
type kind struct {
	gvk     schema.GroupVersionKind
	opts    Options
	applied appliedStates
	// verdicts are authored's, on objects it judged by their
	// managedFields or found foreign.
	verdicts verdicts
}

// New returns the descriptor for the objects of kind gvk. It is named
// "kube:<group>/<kind>" and claims the keys with KeyPrefix(gvk); values may
// be of any version of the kind, and Retrieve reads them in gvk's version.
// New makes no request, except that with a Cache it creates the kind's
// informer.
func New(gvk schema.GroupVersionKind, opts Options) (*kvscheduler.Descriptor, error) {
	if opts.Clients == nil {
		return nil, errors.New("kubedescriptor: Options.Clients is required")
	}
	if opts.FieldManager == "" {
		return nil, errors.New("kubedescriptor: Options.FieldManager is required")
	}
	if errs := validation.IsValidLabelValue(opts.FieldManager); len(errs) > 0 {
		return nil, fmt.Errorf("kubedescriptor: field manager %q is not a label value: %s", opts.FieldManager, strings.Join(errs, "; "))
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("kubedescriptor: kind %s needs a version and a kind", gvk)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Cache != nil {
		// Created now so that the caller's Start runs it.
		informer, err := opts.Cache.ForKind(gvk)
		if err != nil {
			return nil, fmt.Errorf("kubedescriptor: %w", err)
		}
		if cache.IsMetadataOnly(informer) {
			// Retrieve reports the cache's objects as the values the
			// scheduler compares with the desired ones: metadata alone
			// would read as drift on every object.
			return nil, fmt.Errorf("kubedescriptor: the cache of %s is metadata-only (cache.Options.MetadataOnly); a descriptor compares whole objects: give the kind a cache that holds them", cache.KindLabel(gvk))
		}
	}
	k := &kind{gvk: gvk, opts: opts}
	prefix := KeyPrefix(gvk.GroupKind())
	var recreate func(key string, _, value any, _ any) bool
	if opts.RecreateOnImmutable {
		recreate = func(key string, _, value any, _ any) bool {
			_, err := k.patch(k.noCallbackContext(), key, value, true)
			return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "immutable")
		}
	}
	return &kvscheduler.Descriptor{
		UpdateWithRecreate: recreate,
		Name:               "kube:" + strings.TrimSuffix(prefix, "/"),
		NBKeyPrefix:        prefix,
		KeySelector:        func(key string) bool { return strings.HasPrefix(key, prefix) },
		ValueComparator:    k.equal,
		Validate:           k.validate,
		Create:             k.create,
		Update: func(ctx context.Context, key string, _, value any, md any) (any, error) {
			return k.update(ctx, key, value, md)
		},
		Delete:             k.delete,
		Retrieve:           k.retrieve,
		RetrieveKeys:       k.retrieveKeys,
		Dependencies:       func(_ string, value any) []kvscheduler.Dependency { return dependencies(value) },
		IsRetriableFailure: retriable,
	}, nil
}

// ForObject returns the descriptor for obj's kind (see New).
func ForObject(obj runtime.Object, opts Options) (*kvscheduler.Descriptor, error) {
	if opts.Clients == nil {
		return nil, errors.New("kubedescriptor: Options.Clients is required")
	}
	gvk, err := opts.Clients.GVKForObject(obj)
	if err != nil {
		return nil, fmt.Errorf("kubedescriptor: %w", err)
	}
	return New(gvk, opts)
}

// retriable gives up on requests the server rejected as wrong: repeating
// them cannot succeed until the value changes. An apply refused because
// the object was replaced meanwhile (its UID, see changedMeanwhile) is
// Invalid but not wrong: read again, it applies.
func retriable(err error) bool {
	if changedMeanwhile(err) {
		return true
	}
	return !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err)
}

// requestContext bounds one request made under ctx by Timeout.
func (k *kind) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, k.opts.Timeout)
}

// noCallbackContext is the context of requests made outside the
// callbacks that get one (see Options.Context).
func (k *kind) noCallbackContext() context.Context {
	if k.opts.Context != nil {
		return k.opts.Context
	}
	return context.Background()
}
