package leader_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv6PutWithADuplicateMetadataKeepsItsPrecondition: the fence reads
// a PUT's body into maps (the last of two equal keys wins) to find a
// copied stamp and a resourceVersion; the API server reads a built-in
// kind into its typed struct, where a second "metadata" adds to what the
// first one set. A PUT whose first "metadata" holds the resourceVersion
// the writer read and whose second holds labels with a stamp key is, to
// the API server, a conditional update (sent unfenced, it is refused with
// a conflict once anyone wrote the object since: checked here); the fence
// reads it as a write that may create, stamps it, and encodes back only
// the second "metadata": the precondition is gone, and the update lands
// over a change its writer never saw.
//
// The fence now refuses such a body unsent (ErrUnstampable, strictjson.go):
// the stale update never lands.
func TestAdv6PutWithADuplicateMetadataKeepsItsPrecondition(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	kube := controlplanetest.Clientset(cp.Config())
	cms := kube.CoreV1().ConfigMaps(ns)
	read, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"k": "first"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Another writer changes it after the handler read it.
	read2 := read.DeepCopy()
	read2.Data["k"] = "another writer's"
	if _, err := cms.Update(t.Context(), read2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","resourceVersion":"` + read.ResourceVersion + `"},` +
		`"metadata":{"name":"x","labels":{"lariat.dev/term-id":"0000000000000000"}},"data":{"k":"stale handler's"}}`)
	put := func(ctx context.Context, k kubernetes.Interface) error {
		return k.CoreV1().RESTClient().Put().Namespace(ns).Resource("configmaps").Name("x").
			SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	}
	if err := put(t.Context(), kube); !apierrors.IsConflict(err) {
		t.Fatalf("the PUT sent unfenced: %v; want a conflict (the API server reads its first metadata's resourceVersion)", err)
	}
	k := kubernetes.NewForConfigOrDie(e.Fence(cp.Config()))
	inTerm(t, e, func(ctx context.Context) {
		err := put(ctx, k)
		if !errors.Is(err, leader.ErrUnstampable) {
			t.Errorf("the same PUT through the fence: %v; want it refused unsent (ErrUnstampable): the fence reads a key written twice otherwise than the API server", err)
		}
	})
	got, err := cms.Get(t.Context(), "x", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["k"] != "another writer's" {
		t.Errorf("the object's data: %v; the stale PUT landed over another writer's change", got.Data)
	}
}
