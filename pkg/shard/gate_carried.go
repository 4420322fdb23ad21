package shard

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/client"
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
