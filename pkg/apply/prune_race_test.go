package apply_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
)

// An object that leaves the set between the pruning's list and its delete
// (someone removes its lariat.dev/set label to keep it, or another set
// takes it over) is not deleted: the delete is preconditioned on the
// resourceVersion listed, and an object changed since is read again and
// deleted only if it is still the set's.
func TestPruneSparesAnObjectThatLeftTheSetAfterTheList(t *testing.T) {
	seed, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "kids"}
	if err := seed.Apply(ctx, set, cm("stays", "1"), cm("detached", "1"), cm("touched", "1")); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var hookErr error
	patch := func(ctx context.Context, name, body string) error {
		_, err := kube.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	cfg := rest.CopyConfig(cp.Config())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/namespaces/"+ns+"/configmaps") &&
				strings.Contains(r.URL.Query().Get("labelSelector"), apply.LabelSet) {
				// The pruning listed the set's ConfigMaps. Before it
				// deletes: detached leaves the set, touched changes
				// but stays in it.
				once.Do(func() {
					hookErr = patch(r.Context(), "detached", `{"metadata":{"labels":{"`+apply.LabelSet+`":null}}}`)
					if hookErr == nil {
						hookErr = patch(r.Context(), "touched", `{"metadata":{"annotations":{"touched":"yes"}}}`)
					}
				})
			}
			return resp, err
		})
	}
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apply.New(clients, apply.Options{FieldManager: "test-operator"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, cm("stays", "1")); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if hookErr != nil {
		t.Fatalf("changing the objects after the list: %v", hookErr)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "detached", metav1.GetOptions{}); err != nil {
		t.Errorf("an object that left the set after the list was pruned: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "touched", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an object still in the set but changed after the list was not pruned: %v", err)
	}
}
