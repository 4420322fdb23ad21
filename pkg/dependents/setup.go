package dependents

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// registration is what Register and Join share before the loop exists: the
// running registration (not started), its loop handler and its status hook.
type registration[T generic.RuntimeMetaObject, S any] struct {
	d      *Dependents
	h      *loopHandler[T]
	hook   StatusFunc[T, S]
	owners Owners[T]
	kinds  []schema.GroupVersionKind
}

// checkArgs checks what every registration needs and fills opts' defaults.
func checkArgs[T generic.RuntimeMetaObject](factory *generic.Factory, owners Owners[T], name string,
	handler ViewHandler[T], opts *Options) error {
	if factory == nil || owners == nil || handler == nil || name == "" {
		return errors.New("dependents: factory, owners, name and handler are required")
	}
	if opts.FieldManager == "" || len(opts.Kinds) == 0 {
		return errors.New("dependents: Options.FieldManager and Options.Kinds are required")
	}
	if opts.Logger == nil {
		opts.Logger = logrus.StandardLogger()
	}
	if opts.Condition == "" {
		opts.Condition = DefaultCondition
	}
	return nil
}

// prepare builds the registration's state and its loop handler on sched
// (which needs the registration's descriptors before the loop starts).
func prepare[T generic.RuntimeMetaObject, S any](factory *generic.Factory, owners Owners[T], access generic.StatusAccess[T, S],
	name string, handler ViewHandler[T], opts Options, sched *kvscheduler.Scheduler, sb southbound) (*registration[T, S], error) {
	hook, err := statusHook[T, S](opts.Status)
	if err != nil {
		return nil, err
	}
	if hook != nil && (access.Get == nil || access.Set == nil) {
		return nil, errors.New("dependents: Options.Status needs a status access with Get and Set")
	}
	d := &Dependents{name: name, k: newKeys(name), ownerKind: owners.GroupVersionKind().Kind,
		reports: newReports(), done: make(chan struct{}), sched: sched, fails: &failWatch{}, cycles: &cycleLog{}, log: opts.Logger}
	clients := factory.ControllerFactory().SharedCacheFactory().SharedClientFactory()
	b := &builder[T]{k: d.k, ownerGVK: owners.GroupVersionKind(), scheme: factory.Scheme(), kinds: map[schema.GroupKind]bool{}, namespace: opts.Namespace,
		namespaced: func(gvk schema.GroupVersionKind) (bool, error) {
			c, err := clients.ForKind(gvk)
			if err != nil {
				return false, err
			}
			return c.Namespaced(), nil
		}}
	h := &loopHandler[T]{name: name, k: d.k, namespace: opts.Namespace, fieldManager: opts.FieldManager, build: b, handler: handler, ownerRes: kubebridge.ResourceName(owners.GroupVersionKind()),
		childRes: map[string]bool{}, owners: map[string]T{}, live: map[string]runtime.Object{}, gone: map[string]types.UID{},
		desired: map[string]*desired{}, reads: map[string]map[string]bool{}, childOf: map[string]string{}, refused: map[string]map[string]uint64{}, reports: d.reports,
		log: opts.Logger, sched: sched, updating: map[string]uint64{}, landings: sb.landings, held: sb.held,
		get: newLiveGetter(clients), list: newLiveLister(clients), patch: newAnnotationPatcher(clients, opts.FieldManager), fails: d.fails,
		repairDrift: opts.RepairDrift, failed: map[string]string{}, stale: map[string]bool{}}
	for _, gvk := range opts.Kinds {
		b.kinds[gvk.GroupKind()] = true
		h.childRes[kubebridge.ResourceName(gvk)] = true
	}
	d.reports.changed = func(key string) { enqueue(owners, key) }
	return &registration[T, S]{d: d, h: h, hook: hook, owners: owners, kinds: opts.Kinds}, nil
}

// watch has bridge watch the owner kind and every kind of the objects.
// Every change of an owner reaches the loop, its status changes too: a
// handler may read another owner's status through its View, and must be
// computed again, on the status the API server has, when it changes
// (Update computes only those readers for a status-only change).
func (r *registration[T, S]) watch(ctx context.Context, bridge *kubebridge.Bridge) error {
	if err := bridge.WatchKind(ctx, r.owners.GroupVersionKind()); err != nil {
		return err
	}
	for _, gvk := range r.kinds {
		if err := bridge.WatchKind(ctx, gvk); err != nil {
			return err
		}
	}
	return nil
}

// reserve reserves, on the factory, what the registration name must not
// share with another registration: its field manager and its owner
// condition (reserveFieldManager, reserveCondition). Both are released
// by the returned func: when the registration fails, or once it stopped
// (see Dependents.release); not when ctx ends, while its loop may still
// be running a handler or committing.
func reserve[T generic.RuntimeMetaObject, S any](factory *generic.Factory, owners Owners[T],
	access generic.StatusAccess[T, S], name string, opts Options) (release func(), err error) {
	releaseFM, err := reserveFieldManager(factory, name, opts.FieldManager)
	if err != nil {
		return nil, err
	}
	releaseCond, err := reserveCondition(factory, owners, access, name, opts.Condition)
	if err != nil {
		releaseFM()
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { releaseCond(); releaseFM() }) }, nil
}

// reserveFieldManager reserves, on the factory, the field manager the
// registration name applies and labels its objects with. A registration
// reads every object of its kinds labelled with its field manager as its
// own, and its first resync deletes those it did not compute: two
// registrations sharing one would delete each other's objects at every
// start. The second is refused. Registrations of other factories (other
// processes) cannot be seen here: Options.FieldManager says so.
func reserveFieldManager(factory *generic.Factory, name, fm string) (release func(), err error) {
	what := "dependents field manager " + fm
	if holder, ok := factory.Reserve(what, name); !ok {
		return nil, fmt.Errorf("dependents: registration %q would apply and label its objects with the field manager %q, "+
			"which registration %q uses already: each would delete the other's objects as leftovers; "+
			"give one of them its own Options.FieldManager", name, fm, holder)
	}
	return func() { factory.Release(what, name) }, nil
}

// reserveCondition reserves, on the factory, the owner condition the
// registration name writes (none when access reaches no condition): two
// registrations writing one condition of one kind would overwrite each
// other's summary on every pass, each write starting another pass, and
// the owner would read Ready from whichever wrote last. The second is
// refused. The condition is released by the returned func (see reserve).
func reserveCondition[T generic.RuntimeMetaObject, S any](factory *generic.Factory, owners Owners[T],
	access generic.StatusAccess[T, S], name string, cond condition.Cond) (release func(), err error) {
	if access.Get == nil || access.Set == nil || access.Conditions == nil && access.SetCondition == nil {
		return func() {}, nil
	}
	kind := owners.GroupVersionKind().GroupKind().String()
	what := "dependents condition " + kind + " " + string(cond)
	if holder, ok := factory.Reserve(what, name); !ok {
		return nil, fmt.Errorf("dependents: registration %q would write the condition %q of %s, which registration %q writes already: "+
			"give one of them its own Options.Condition", name, cond, kind, holder)
	}
	return func() { factory.Release(what, name) }, nil
}
