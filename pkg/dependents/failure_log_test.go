package dependents_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestHandlerFailureIsLoggedOnceAtWarning: a new owner's handler fails
// (it returns a ConfigMap, a kind outside Options.Kinds) and nothing was
// ever applied for it. The failure was once told only by the owner's
// condition: a misconfiguration that left the operator silent. It is
// logged at warning once, and at debug while the same error repeats on
// every computation of the owner: whether the owner is first computed by
// an event or by the first resync (an owner that existed before the
// start; before, a failure at a resync was never logged).
func TestHandlerFailureIsLoggedOnceAtWarning(t *testing.T) {
	for _, before := range []bool{false, true} {
		t.Run(map[bool]string{false: "created after the start", true: "created before the start"}[before], func(t *testing.T) {
			testHandlerFailureIsLoggedOnceAtWarning(t, before)
		})
	}
}

func testHandlerFailureIsLoggedOnceAtWarning(t *testing.T, createdBefore bool) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	outside := func(app *demov1.WebApp, _ dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name}})}, nil
	}
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	create := func() {
		_, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: demov1.WebAppSpec{Image: "web:1"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if createdBefore {
		create()
	}
	d, err := dependents.RegisterView(t.Context(), f, webapps, webAppStatus(), "failure-log", outside, dependents.Options{
		FieldManager: "failure-log", Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Service")}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
		defer cancel()
		if err := d.Wait(ctx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	if !createdBefore {
		create()
	}
	owner := ns + "/web"
	entries := func(level logrus.Level, says string) int {
		n := 0
		for _, e := range hook.AllEntries() {
			if e.Level == level && strings.Contains(e.Message, owner+": the handler failed") && strings.Contains(e.Message, says) {
				if err, _ := e.Data[logrus.ErrorKey].(error); err != nil && strings.Contains(err.Error(), "ConfigMap is not one of the registration's kinds") {
					n++
				}
			}
		}
		return n
	}
	controlplanetest.Eventually(t, wait, "a warning naming the owner and the handler's error", func() bool {
		return entries(logrus.WarnLevel, "nothing is applied for it") > 0
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Image = "web:2"
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the owner computed again after its update, failing the same way", func() bool {
		return entries(logrus.DebugLevel, "failed again") > 0
	})
	if n := entries(logrus.WarnLevel, ""); n != 1 {
		t.Fatalf("the same failure was logged %d times at warning, want once", n)
	}
}
