package apply_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// RecreateImmutable recreates only objects rejected because of immutable
// fields; "any other Invalid error is returned and nothing is deleted"
// (docs/safety.md). Here the desired ConfigMap is itself invalid (a data
// key with a character keys may not have), whatever is stored: recreating
// it can only fail the same way after the delete. The server's message
// echoes the key, which happens to contain the word "immutable"; the
// object must not be deleted on the strength of that word.
func TestRecreateImmutableIsNotFooledByAValueThatSaysImmutable(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "cfg", RecreateImmutable: true}
	if err := a.Apply(ctx, set, cm("cfg", "1")); err != nil {
		t.Fatal(err)
	}
	first, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := cm("cfg", "1")
	bad.Data["immutable:flag"] = "on" // ':' is not allowed in a ConfigMap key
	err = a.Apply(ctx, set, bad)
	if !apierrors.IsInvalid(err) {
		t.Errorf("a ConfigMap with an invalid key: %v, want Invalid", err)
	}
	got, getErr := kube.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
	if getErr != nil || got.UID != first.UID {
		t.Errorf("a ConfigMap rejected for an invalid key (not an immutable field) was deleted or recreated: %v (apply: %v)", getErr, err)
	}
}
