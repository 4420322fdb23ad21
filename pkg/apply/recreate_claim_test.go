package apply_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An object being recreated (its apply rejected for an immutable field)
// that another set creates again between the delete and the create is that
// set's: the recreate leaves it as it is and fails with a *ClaimedError,
// instead of applying over it.
func TestRecreateLeavesAnObjectAnotherSetCreatedMeanwhile(t *testing.T) {
	other, kube, ns, owner := setup(t)
	ctx := t.Context()
	var once sync.Once
	var otherErr error
	cfg := rest.CopyConfig(cp.Config())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.Method == http.MethodDelete && resp.StatusCode == http.StatusOK && strings.HasSuffix(r.URL.Path, "/configmaps/x") {
				// The recreate's delete went through: another set
				// creates the object before the recreate does.
				once.Do(func() { otherErr = other.Apply(ctx, apply.Set{Owner: owner, ID: "other"}, cm("x", "other")) })
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
	set := apply.Set{Owner: owner, ID: "mine", RecreateImmutable: true}
	immutable := func(value string) *corev1.ConfigMap {
		c := cm("x", value)
		c.Immutable = ptr.To(true)
		return c
	}
	if err := a.Apply(ctx, set, immutable("1")); err != nil {
		t.Fatal(err)
	}
	err = a.Apply(ctx, set, immutable("2"))
	if otherErr != nil {
		t.Fatalf("the other set's apply: %v", otherErr)
	}
	var claimed *apply.ClaimedError
	if !errors.As(err, &claimed) || claimed.SetID != "other" {
		t.Errorf("recreate over another set's object: %v, want a *apply.ClaimedError naming set other", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "x", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["v"] != "other" || got.Annotations[apply.AnnotationSetID] != "other" {
		t.Fatalf("the other set's object was applied over: data %v, annotations %v", got.Data, got.Annotations)
	}
}
