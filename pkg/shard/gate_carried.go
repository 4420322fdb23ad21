package shard

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// carriedGone decides the pass over a deletion an earlier term of this
// replica's Join saw and handed over (controller.CarriedDeletionAt): that
// term's watch, which selected the term's share, reported a delete at
// resourceVersion rv carrying the term's assignment. It reports a move
// away the same way (the object stops matching the selector, and the
// event carries its old labels), and then the deletion, if any came
// later, was the next member's. The object's state at exactly rv tells
// the two apart: absent, it was deleted at rv while assigned to the
// earlier term, and no other member ever held it since, so its deletion
// is this replica's to tell; present, it moved. A revision the API server
// compacted away leaves the question open, and an open question is not a
// deletion: the key is refused (forgotten).
func (g *memberGate) carriedGone(ctx context.Context, c *client.Client, key, rv string) (bool, error) {
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return false, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
	err = c.List(ctx, ns, list, metav1.ListOptions{
		FieldSelector:        fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion:      rv,
		ResourceVersionMatch: metav1.ResourceVersionMatchExact,
	})
	switch {
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		g.m.metrics.refuse(g.gvk, refusedUncached)
		return false, nil
	case err != nil:
		return false, err
	case len(list.Items) > 0:
		g.m.metrics.refuse(g.gvk, refusedUncached)
		return false, nil // it moved away at rv
	}
	g.m.metrics.admit(g.gvk)
	return true, nil
}

// carriedHeldGone decides the pass over a key an earlier term of this
// replica's Join held and handed over with no delete event seen
// (controller.CarriedHeldSince): its cache last had the object at
// resourceVersion rv, and held tells from labels whether the object was
// still that term's. The object present as the handlers were given it
// (uid) went nowhere: while still assigned to the ended term, the key is
// kept (a quiet retry) until the sharder moves it (to this term, whose
// cache then has it, or to another member) or it is deleted; assigned
// elsewhere, it is not this replica's, and the key is refused. Gone, or
// its name taken by another object, its history after rv tells: deleted
// while held, it is this replica's deletion to tell; moved away first,
// the deletion was its next member's. A history the API server compacted
// away leaves the question open, and an open question is not a deletion.
func (g *memberGate) carriedHeldGone(ctx context.Context, c *client.Client, key, rv string, uid types.UID, held func(map[string]string) bool) (bool, error) {
	stillHeld := func(labels map[string]string) error {
		if held(labels) {
			return fmt.Errorf("shard: %s %s: still assigned to an ended term of this replica", g.gvk.Kind, key)
		}
		return nil
	}
	return g.absentSince(ctx, c, key, rv, uid, stillHeld, held)
}

// absentSince decides the pass over the absence of key's object (of UID
// uid, when not empty), which this replica last held at resourceVersion
// rv and gave up without seeing it go: by an ended term (carriedHeldGone)
// or by handing it over (handedGone). Present and the same object, it went
// nowhere: kept (a quiet retry, with keep's error) while keep says no
// other member may hold it yet, refused otherwise. Gone, or its name taken
// by another object, its history after rv tells: deleted while held
// accepted its labels, the deletion is this replica's to tell; moved
// first, it is not. A history the API server compacted away is an open
// question, and an open question is not a deletion.
func (g *memberGate) absentSince(ctx context.Context, c *client.Client, key, rv string, uid types.UID,
	keep func(labels map[string]string) error, held func(labels map[string]string) bool) (bool, error) {
	live, err := g.get(ctx, c, key)
	switch {
	case err == nil && (uid == "" || live.GetUID() == uid):
		if err := keep(live.GetLabels()); err != nil {
			return false, controller.RetryQuietly(err)
		}
		g.m.metrics.refuse(g.gvk, refusedUncached)
		return false, nil
	case err != nil && !apierrors.IsNotFound(err):
		return false, err
	}
	gone, err := g.wentWhileHeld(ctx, c, key, rv, uid, held)
	if err != nil {
		return false, err
	}
	if !gone {
		g.m.metrics.refuse(g.gvk, refusedUncached)
		return false, nil
	}
	g.m.metrics.admit(g.gvk)
	return true, nil
}

// wentWhileHeld reads the history of key's object (of UID uid, when not
// empty) after resourceVersion rv, which ends in its deletion, up to the
// first event that decides: labels held does not accept (moved away: not
// gone while held), or its delete event with labels held accepts.
func (g *memberGate) wentWhileHeld(ctx context.Context, c *client.Client, key, rv string, uid types.UID, held func(map[string]string) bool) (bool, error) {
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.Watch(ctx, ns, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: rv,
	})
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			err := apierrors.FromObject(ev.Object)
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return false, nil
			}
			return false, fmt.Errorf("shard: the history of %s %s: %w", g.gvk.Kind, key, err)
		case watch.Bookmark:
			continue
		}
		o, err := meta.Accessor(ev.Object)
		if err != nil {
			return false, err
		}
		if uid != "" && o.GetUID() != uid {
			continue // another object of that name
		}
		if !held(o.GetLabels()) {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			return true, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return false, fmt.Errorf("shard: the history of %s %s ended before its deletion", g.gvk.Kind, key)
}
