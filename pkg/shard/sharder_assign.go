package shard

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// objKey names one object for the sharder's queue: the index of its kind in
// the term's kinds, and its cache key.
type objKey struct {
	kind int
	key  string
}

// maxConflicts is how many times in a row one pass re-reads an object whose
// write met a concurrent change, before it leaves it to the rate-limited
// queue.
const maxConflicts = 3

// term is the state of one term of the elected sharder.
type term struct {
	s         *Sharder
	kinds     []resolvedKind
	informers []cache.SharedIndexInformer
	read      metadata.Interface
	write     metadata.Interface
	queue     workqueue.TypedRateLimitingInterface[objKey]
	members   *members
	drains    *drains
	held      heldBy               // the member each object was last seen on (sharder_held.go)
	gcLeases  kubernetes.Interface // fenced, for the Leases of dead members
	errs      kindErrors           // each view's last list error (sharder_sync.go)
}

func newTerm(s *Sharder, kinds []resolvedKind, read, write metadata.Interface, leases, gcLeases kubernetes.Interface) *term {
	t := &term{s: s, kinds: kinds, read: read, write: write, drains: newDrains(), gcLeases: gcLeases,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[objKey](),
			workqueue.TypedRateLimitingQueueConfig[objKey]{Name: "shard-" + s.ring.Name})}
	t.members = newMembers(s.ring, leases, s.o.RetryPeriod, s.o.ClockSkew, s.log, t.requeueAll)
	t.members.ender = gcLeases.CoordinationV1()
	for i, k := range kinds {
		inf := metadatainformer.NewFilteredMetadataInformer(read, k.gvr, s.o.Namespace, 0, cache.Indexers{}, nil).Informer()
		// The sharder needs labels, owner references and names: managed
		// fields are most of an object's metadata, and it keeps them all.
		_ = inf.SetTransform(func(o any) (any, error) {
			if m, ok := o.(metav1.Object); ok {
				m.SetManagedFields(nil)
			}
			return o, nil
		})
		add := func(o any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(o); err == nil {
				t.queue.Add(objKey{kind: i, key: key})
			}
		}
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: add,
			UpdateFunc: func(old, cur any) {
				o, ok1 := old.(metav1.Object)
				c, ok2 := cur.(metav1.Object)
				// Only labels, the trail and owner references
				// decide an assignment.
				if !ok1 || !ok2 || !maps.Equal(o.GetLabels(), c.GetLabels()) ||
					o.GetAnnotations()[TrailAnnotation(s.ring.Name)] != c.GetAnnotations()[TrailAnnotation(s.ring.Name)] ||
					!slices.EqualFunc(o.GetOwnerReferences(), c.GetOwnerReferences(), ownerRefEqual) {
					add(cur)
				}
			},
			DeleteFunc: add,
		})
		t.watchErrors(i, inf)
		t.informers = append(t.informers, inf)
	}
	return t
}

func ownerRefEqual(a, b metav1.OwnerReference) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name &&
		(a.Controller != nil && *a.Controller) == (b.Controller != nil && *b.Controller)
}

// run starts the views, waits for the member view to sync, and runs the
// workers until ctx ends; each kind's objects are decided on once its own
// view synced.
func (t *term) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer t.queue.ShutDown()
	for _, inf := range append([]cache.SharedIndexInformer{t.members.inf}, t.informers...) {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	// Each kind is decided on once its own view synced: one kind that
	// cannot be listed holds up no other (sharder_sync.go).
	if !cache.WaitForCacheSync(ctx.Done(), t.members.inf.HasSynced) {
		return
	}
	for i := range t.informers {
		wg.Go(func() { t.whenSynced(ctx, i) })
	}
	wg.Go(func() { t.reportUnsynced(ctx) })
	wg.Go(func() { t.members.loop(ctx) })
	wg.Go(func() { t.reportDrains(ctx) })
	wg.Go(func() {
		// "No object names this dead member" needs every kind's view.
		if cache.WaitForCacheSync(ctx.Done(), t.allSynced) {
			t.collectLeases(ctx, t.gcLeases.CoordinationV1().Leases(t.s.ring.Namespace))
		}
	})
	for range t.s.o.Workers {
		wg.Go(func() {
			for t.next(ctx) {
			}
		})
	}
	<-ctx.Done()
}

// requeueAll queues every object: the live members changed, so any
// object's wanted member may have.
func (t *term) requeueAll() {
	for i, inf := range t.informers {
		for _, key := range inf.GetStore().ListKeys() {
			t.queue.Add(objKey{kind: i, key: key})
		}
	}
}

func (t *term) next(ctx context.Context) bool {
	k, quit := t.queue.Get()
	if quit {
		return false
	}
	defer t.queue.Done(k)
	if err := t.process(ctx, k); err != nil {
		if ctx.Err() == nil {
			t.s.log.WithError(err).WithField("object", t.kinds[k.kind].GVK.Kind+" "+k.key).Debug("shard: will retry")
		}
		t.queue.AddRateLimited(k)
		return true
	}
	t.queue.Forget(k)
	return true
}

// process decides on one object and writes the decision. It changes
// nothing unless the member view is valid and has a live member.
func (t *term) process(ctx context.Context, k objKey) error {
	v := t.members.view()
	if v == nil || !v.valid || len(v.live) == 0 {
		return nil // requeued when the view changes
	}
	if !t.informers[k.kind].HasSynced() {
		return nil // queued again once the kind's view synced (whenSynced)
	}
	o, exists, err := t.informers[k.kind].GetStore().GetByKey(k.key)
	if err != nil {
		return err
	}
	if !exists {
		t.drains.track(k, "", time.Time{})
		t.held.forget(k)
		return nil
	}
	obj := o.(*metav1.PartialObjectMetadata)
	rk := t.kinds[k.kind]
	client := t.write.Resource(rk.gvr).Namespace(obj.Namespace)
	for conflicts := 0; ; conflicts++ {
		d := decide(obj, rk, v, t.s.ring.Name, t.held.note(k, obj, t.s.ring.Name))
		if d.confirm != "" {
			t.members.askConfirm(d.confirm)
			return nil // requeued when the view changes
		}
		if d.patch == nil {
			t.drains.track(k, d.drainOf, time.Now())
			return nil
		}
		_, err := client.Patch(ctx, obj.Name, types.MergePatchType, d.patch, metav1.PatchOptions{})
		switch {
		case err == nil:
			t.drains.track(k, d.drainOf, time.Now())
			if d.move {
				t.s.metrics.moves.Inc()
			}
			return nil
		case apierrors.IsNotFound(err):
			t.drains.track(k, "", time.Time{})
			return nil
		case !apierrors.IsConflict(err) || conflicts == maxConflicts:
			return err
		}
		// Someone changed the object since the informer saw it (a
		// member acknowledged, another write): read what it is now
		// and decide again.
		obj, err = t.read.Resource(rk.gvr).Namespace(obj.Namespace).Get(ctx, obj.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// decision is what the sharder does about one object.
type decision struct {
	patch   []byte // the merge patch to send; nil: nothing to write
	move    bool   // the patch moves the object off a member
	drainOf string // after the patch, the object drains from this member
	confirm string // the object's member is neither live nor known dead: confirm first
}

// decide applies the protocol's table to obj (docs/replicas.md) for the
// member the object is on (holder): an unassigned object gets its wanted
// member; an object on a dead member is moved directly; an object on a
// live member that is not the wanted one is asked to drain, once; an
// object on its wanted member loses a drain label it no longer needs. An
// assignment label the trail does not back is written back to the trail's
// member. Each patch carries obj's resourceVersion, so it fails on any
// change the sharder has not seen (a member's acknowledgement above all)
// instead of overwriting it. last is the member the term last saw the
// object on: an object with neither trail nor label is still on it.
func decide(obj *metav1.PartialObjectMetadata, k resolvedKind, v *view, ring, last string) decision {
	assign, drain := AssignmentLabel(ring), DrainLabel(ring)
	cur := obj.Labels[assign]
	on := holder(obj.Labels, obj.Annotations, ring)
	if _, trailed := obj.Annotations[TrailAnnotation(ring)]; on == "" && !trailed {
		on = last
	}
	_, draining := obj.Labels[drain]
	want := Pick(HashKey(obj, k.Kind, k.ownerNamespaced), v.live)
	set := map[string]any{}
	var note map[string]any
	var d decision
	switch {
	case on == "":
		set[assign] = want
		note = map[string]any{TrailAnnotation(ring): want}
	case on == want:
		// Either settled, or the move it drained for is off.
	case v.liveSet[on]:
		d.drainOf = on
		if !draining {
			set[drain] = "true"
			d.move = cur == on // not again when a user's write dropped it
		}
	case v.dead[on]:
		set[assign] = want
		note = map[string]any{TrailAnnotation(ring): want}
		d.move = true
	default:
		d.confirm = on
		return d
	}
	if on != "" && cur != on && set[assign] == nil {
		// A label written outside the protocol (dropped, or naming
		// another member): the object stays on the trail's member.
		set[assign] = on
	}
	if draining && d.drainOf == "" {
		set[drain] = nil
	}
	if len(set) == 0 {
		return d
	}
	md := map[string]any{"resourceVersion": obj.ResourceVersion, "labels": set}
	if note != nil {
		md["annotations"] = note
	}
	d.patch, _ = json.Marshal(map[string]any{"metadata": md})
	return d
}

// holder returns the member an object is on: the one its trail names,
// until that member released it ("" then: unassigned, whatever the label
// says); with no trail (created with the label, or assigned before
// trails), the one its label names, which claims it on its first pass.
func holder(labels, annotations map[string]string, ring string) string {
	tr := readTrail(annotations, ring)
	switch {
	case tr.released:
		return ""
	case tr.member != "":
		return tr.member
	}
	return labels[AssignmentLabel(ring)]
}
