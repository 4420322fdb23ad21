package dependents_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// heldRequirers is the setup the held-without tests share, in a namespace
// of its own: WebApp a's ConfigMap a-cfg is ready by a's rule while
// aReady holds (it carries a's image, so that touchImage changes it), and
// every other WebApp's ConfigMap <name>-cm RequiresOwner a. a's or b's
// handler fails while aFailing or bFailing holds, which holds its objects
// at a restart.
type heldRequirers struct {
	ns, fm string
	kinds  []schema.GroupVersionKind // ConfigMaps only

	aReady, aFailing, bFailing atomic.Bool
}

// newHeldRequirers returns the setup for field manager fm, with a ready
// and no handler failing.
func newHeldRequirers(t *testing.T, fm string) *heldRequirers {
	t.Helper()
	r := &heldRequirers{ns: controlplanetest.Namespace(t, cp.Config()), fm: fm,
		kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}}
	r.aReady.Store(true)
	return r
}

// handler is the registration's handler (see heldRequirers).
func (r *heldRequirers) handler(app *demov1.WebApp) ([]*dependents.Object, error) {
	switch {
	case app.Namespace != r.ns:
		return nil, nil
	case app.Name == "a" && r.aFailing.Load(), app.Name == "b" && r.bFailing.Load():
		return nil, errors.New("cannot compute " + app.Name)
	case app.Name == "a":
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-cfg"},
			Data: map[string]string{"image": app.Spec.Image}}).
			ReadyWhen(func(runtime.Object) (bool, string) { return r.aReady.Load(), "a's rule" })}, nil
	}
	return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"}}).
		RequiresOwner(r.ns, "a")}, nil
}

// start registers the handler, until ctx ends, with advStart's options.
func (r *heldRequirers) start(t *testing.T, ctx context.Context) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	return advStart(t, ctx, r.fm, r.kinds, r.handler)
}
