package dependents_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv13FinalizerRemovedWhileTheDeletingConditionIsWritten: WebApp a,
// held by a finalizer, is deleted; the registration writes its condition
// ("being deleted"), and that write is held in flight while the finalizer
// is removed (a is gone) and a is created again under its name (another
// UID, another ConfigMap). The stale write lands on nothing (404 or 409),
// and the new a ends Ready with its own ConfigMap, the old one deleted;
// no error is logged for the gone a's status.
func TestAdv13FinalizerRemovedWhileTheDeletingConditionIsWritten(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var block atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if block.Load() && req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/webapps/a/status") {
				once.Do(func() { close(entered) })
				<-release
			}
			return next.RoundTrip(req)
		})
	})
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	hook := logtest.NewLocal(log)
	log.SetOutput(adv13Writer{t})
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return advConfigMaps(app)
	}
	_, webapps := dependentstest.Start(t, t.Context(), cfg, nil, "adv13-deleting", handler,
		dependents.Options{FieldManager: "adv13-deleting", Kinds: adv13CMKind, Logger: log})
	if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a",
		Finalizers: []string{advFinalizer}}, Spec: demov1.WebAppSpec{Image: "app:1",
		Config: map[string]string{"cm": "a-old"}}}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a Ready with a-old", func() bool {
		return advConfigMap(t, ns, "a-old") != nil && adv13Ready(t, webapps, ns, "a")
	})
	block.Store(true)
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	<-entered
	if _, err := webapps.Patch(t.Context(), ns, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a gone", func() bool {
		_, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		return err != nil
	})
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-new"})
	block.Store(false)
	close(release)
	controlplanetest.Eventually(t, wait, "the new a Ready with a-new, a-old deleted", func() bool {
		return advConfigMap(t, ns, "a-new") != nil && advConfigMap(t, ns, "a-old") == nil &&
			adv13Ready(t, webapps, ns, "a") && has(readyMessage(t, webapps, ns, "a"), "a-new")
	})
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.ErrorLevel {
			t.Errorf("an error logged: %s %v", e.Message, e.Data)
		}
	}
}
