package generic_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// permanentFactory returns a factory for ns whose controllers record their
// metrics in reg and log to a logger whose entries hook keeps.
func permanentFactory(t *testing.T, ns string, reg prometheus.Registerer) (*generic.Factory, *logtest.Hook) {
	t.Helper()
	logger := logrus.New()
	logger.SetOutput(io.Discard)
	logger.SetLevel(logrus.DebugLevel)
	hook := logtest.NewLocal(logger)
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: logger, Registerer: reg},
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, hook
}

// A status handler (controller.Permanent) and a generating handler (an
// error wrapping controller.ErrPermanent), each alone on its kind's
// controller, that fail permanently for an object that is wrong: the
// handler's condition is False with its message; the key is not retried
// (lariat_queue_retries_total, counted when a failed key is re-queued with
// backoff, stays 0 through the pass that wrote the condition and the pass
// that write's event started); the failure is logged once at error level
// (the second pass fails the same way, quietly). The fix, a new version of
// the object, is handled at once and succeeds.
func TestPermanentErrorSetsConditionAndIsNotRetried(t *testing.T) {
	const sized = condition.Cond("Sized")
	for _, kind := range []string{"status", "generating"} {
		t.Run(kind, func(t *testing.T) {
			ns := controlplanetest.Namespace(t, cp.Config())
			reg := prometheus.NewRegistry()
			f, hook := permanentFactory(t, ns, reg)
			svcs := newServices(t, f)
			cond, message := sized, `size "huge" is not one of small, large`
			if kind == "status" {
				generic.RegisterStatusHandler(t.Context(), svcs, serviceStatus, sized, "size",
					func(svc *corev1.Service, st corev1.ServiceStatus) (corev1.ServiceStatus, error) {
						if size := svc.Labels["size"]; size == "huge" {
							return st, controller.Permanent(fmt.Errorf("size %q is not one of small, large", size))
						}
						return st, nil
					})
			} else {
				cond, message = generated, "no children for a huge service: "+controller.ErrPermanent.Error()
				generic.RegisterGeneratingHandler(t.Context(), svcs, newApplier(t, cp.Config(), f), serviceStatus, generated, "children",
					func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
						if svc.Labels["size"] == "huge" {
							return nil, st, fmt.Errorf("no children for a huge service: %w", controller.ErrPermanent)
						}
						return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child"}}}, st, nil
					}, nil)
			}
			createService(t, ns, "web", 80)
			updateService(t, ns, "web", func(s *corev1.Service) { s.Labels = map[string]string{"size": "huge"} })
			start(t, f)
			var written *corev1.Service
			eventually(t, "the condition False with the message", func() bool {
				written = getService(t, ns, "web")
				return cond.IsFalse(written.Status.Conditions) && cond.Message(written.Status.Conditions) == message
			})
			// The condition's write starts one more pass; it has ended
			// once a later version's pass ran (one key is handled by one
			// worker at a time), which the fix brings.
			updateService(t, ns, "web", func(s *corev1.Service) { s.Labels = map[string]string{"size": "small"} })
			eventually(t, "the condition True once the object is fixed", func() bool {
				return cond.IsTrue(getService(t, ns, "web").Status.Conditions)
			})
			gvk := controller.KindLabel(corev1.SchemeGroupVersion.WithKind("Service"))
			if n := counterValue(t, reg, "lariat_queue_retries_total", gvk); n != 0 {
				t.Errorf("a permanently failing key was retried %v times", n)
			}
			var logged []string
			for _, e := range hook.AllEntries() {
				if e.Level <= logrus.ErrorLevel && strings.Contains(e.Message, message) {
					logged = append(logged, e.Message)
				}
			}
			if len(logged) != 1 {
				t.Errorf("the permanent failure was logged %d times at error level, want once: %q", len(logged), logged)
			}
		})
	}
}
