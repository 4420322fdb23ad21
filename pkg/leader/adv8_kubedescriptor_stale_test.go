package leader_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// TestAdv8KubedescriptorApplyThatMayCreateIsRefusedAfterItsTerm: through
// the fence, every kubedescriptor write that may create an object must be
// refused once its term is over (9bc3d0b: "a stalled apply could create
// the object after the term ended"). Before, only a create of an object
// read as absent, without Options.Adopt, carried createOnly and so the
// term's stamp; two creates went unstamped and landed after the term:
//
//   - adopt: with Options.Adopt the create applied without any read or
//     resourceVersion, so the fence did not stamp it;
//   - ours-deleted: the descriptor's own object exists when read, so the
//     apply went without a resourceVersion; the next leader deletes the
//     object (its value was removed) while the apply sits in the network.
//
// (absent, a create of an object read as absent without Adopt, is
// stamped: it is the control.) Now an object read as absent is created
// by a stamped create-only apply, Adopt or not, which the term policy
// refuses, and one read as present is applied with its UID and
// resourceVersion, which the API server refuses (Conflict) once the
// object is gone. Each apply is kept in the network, the term ends, and
// it is delivered: it must be refused, the object not created.
func TestAdv8KubedescriptorApplyThatMayCreateIsRefusedAfterItsTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	admin := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	if _, err := admin.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ours-deleted",
		Labels:      map[string]string{kubedescriptor.LabelManagedBy: "term-test"},
		Annotations: map[string]string{kubedescriptor.AnnotationAppliedAs: "term-test:" + kubedescriptor.KeyFor(configMapGVK, ns, "ours-deleted")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kept := map[string]*keptRequest{}
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		for name, adopt := range map[string]bool{"adopt": true, "ours-deleted": false, "absent": false} {
			net := &keptWrites{}
			clients, err := client.NewSharedClientFactory(e.Fence(keepWritesButReviews(net, cp.Config())), nil)
			if err != nil {
				t.Fatal(err)
			}
			d, err := kubedescriptor.ForObject(&corev1.ConfigMap{}, kubedescriptor.Options{Clients: clients, FieldManager: "term-test",
				Namespace: ns, Context: t.Context(), Adopt: adopt})
			if err != nil {
				t.Fatal(err)
			}
			cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": "v"}}
			key, err := kubedescriptor.Key(cm)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Create(ctx, key, cm)
			if kept[name] = net.take(); kept[name] == nil {
				t.Fatalf("%s: the create did not reach the network: %v", name, err)
			}
		}
		// The next leader removes the value: the object goes while the
		// apply sits in the network.
		if err := admin.Delete(t.Context(), "ours-deleted", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	// The API server judges by its informer's copy of the Lease (a
	// documented residual, docs/safety.md): the held writes go once it
	// has seen the term end, as they would after any real delay.
	waitRefused(t, ns, term)
	for _, name := range []string{"absent", "adopt", "ours-deleted"} {
		status := kept[name].replay(t)
		_, err := admin.Get(t.Context(), name, metav1.GetOptions{})
		if status < http.StatusMultipleChoices || !apierrors.IsNotFound(err) {
			t.Errorf("%s: the kubedescriptor apply sent in an ended term was delivered and got %d (object read after it: %v); "+
				"want it refused (by the term policy, or as a conflict), the object not created (body %q)", name, status, err, kept[name].body)
		}
	}
}

// keepWritesButReviews is keptWrites.wrap, except that it lets the
// fence's SelfSubjectReview (asked once per term, to stamp creates) reach
// the API server, so that a create-only apply is sent stamped.
func keepWritesButReviews(k *keptWrites, cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet || strings.Contains(req.URL.Path, "selfsubjectreviews") {
				return next.RoundTrip(req)
			}
			var body []byte
			if req.Body != nil {
				b, err := io.ReadAll(req.Body)
				_ = req.Body.Close()
				if err != nil {
					return nil, err
				}
				body = b
			}
			k.mu.Lock()
			k.kept = &keptRequest{method: req.Method, url: req.URL.String(), header: req.Header.Clone(), body: body}
			k.mu.Unlock()
			return nil, errors.New("the network holds the request")
		})
	})
	return c
}
