package kubedescriptor_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// TestConditionalWritesReadAgainAfterAConflict: Update and Delete are
// conditional on the object as the descriptor last knew it (its UID and
// resourceVersion), so that a write held in the network never lands over
// a later write. For the user that is no new failure: an object another
// writer changed since is read again and written (its other fields
// kept), one deleted since is created again by Update and is done for
// Delete, and one replaced by another manager's object is not taken over.
func TestConditionalWritesReadAgainAfterAConflict(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := kubedescriptor.New(configMapKind, kubedescriptor.Options{Clients: clients, FieldManager: fieldManager, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	value := func(v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: ns}, Data: map[string]string{"greeting": v}}
	}
	key := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	md, err := d.Create(ctx, key, value("hello"))
	if err != nil {
		t.Fatal(err)
	}
	outside := func(annotation string) {
		t.Helper()
		cm, err := kube.Get(ctx, "web-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "outside", annotation)
		if _, err := kube.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Changed by another writer since the descriptor's apply.
	outside("1")
	if md, err = d.Update(ctx, key, value("hello"), value("changed"), md); err != nil {
		t.Fatalf("update after another writer's change: %v", err)
	}
	if got, err := kube.Get(ctx, "web-config", metav1.GetOptions{}); err != nil || got.Data["greeting"] != "changed" || got.Annotations["outside"] != "1" {
		t.Fatalf("after the update: %v %v; want greeting changed and the other writer's annotation kept", got, err)
	}

	// Deleted since: the update creates it again.
	if err := kube.Delete(ctx, "web-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if md, err = d.Update(ctx, key, value("changed"), value("again"), md); err != nil {
		t.Fatalf("update of a deleted object: %v", err)
	}
	if got, err := kube.Get(ctx, "web-config", metav1.GetOptions{}); err != nil || got.Data["greeting"] != "again" {
		t.Fatalf("after the update of the deleted object: %v %v; want it created again", got, err)
	}

	// Changed since, then deleted by the descriptor.
	outside("2")
	if err := d.Delete(ctx, key, value("again"), md); err != nil {
		t.Fatalf("delete after another writer's change: %v", err)
	}
	if _, err := kube.Get(ctx, "web-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the delete: %v; want the object gone", err)
	}

	// Replaced by another manager's object: neither updated nor deleted.
	if _, err := kube.Create(ctx, value("theirs"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var notManaged *kubedescriptor.NotManagedError
	if _, err := d.Update(ctx, key, value("again"), value("ours"), md); !errors.As(err, &notManaged) {
		t.Fatalf("update of an object replaced by another manager's: %v; want a NotManagedError", err)
	}
	if err := d.Delete(ctx, key, value("again"), md); err != nil {
		t.Fatalf("delete of an object replaced by another manager's: %v", err)
	}
	if got, err := kube.Get(ctx, "web-config", metav1.GetOptions{}); err != nil || got.Data["greeting"] != "theirs" {
		t.Fatalf("the other manager's object after the update and delete: %v %v; want it untouched", got, err)
	}
}

// TestReplacedMeanwhileIsRetriable: an apply carrying the UID of an
// object replaced meanwhile under its name is refused as Invalid
// (metadata.uid is immutable); when a write's attempts all end so, the
// scheduler must retry it (a fresh read applies), not give the value up
// as wrong. Other Invalid answers are still given up.
func TestReplacedMeanwhileIsRetriable(t *testing.T) {
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := kubedescriptor.New(configMapKind, kubedescriptor.Options{Clients: clients, FieldManager: fieldManager})
	if err != nil {
		t.Fatal(err)
	}
	gk := configMapKind.GroupKind()
	replaced := apierrors.NewInvalid(gk, "web-config", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "0b8b", "field is immutable")})
	wrong := apierrors.NewInvalid(gk, "web-config", field.ErrorList{field.Invalid(field.NewPath("data"), "x", "bad")})
	if !d.IsRetriableFailure(replaced) {
		t.Errorf("an apply refused for the UID of a replaced object is not retried: %v", replaced)
	}
	if d.IsRetriableFailure(wrong) {
		t.Errorf("an invalid value is retried: %v", wrong)
	}
}
