package controller_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// labelSetter is a handler that updates a ConfigMap's "owner" label to its
// value whenever it differs, and returns the stored object, as generated
// handlers do. It counts its successful writes.
func labelSetter(t *testing.T, value string, writes *atomic.Int64, at func()) controller.SharedHandler {
	return controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || cm.Labels["owner"] == value {
			return nil, nil
		}
		cm = cm.DeepCopy()
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels["owner"] = value
		updated, err := kube(cp.Config()).CoreV1().ConfigMaps(cm.Namespace).Update(t.Context(), cm, metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		writes.Add(1)
		if at != nil {
			at()
		}
		return updated, nil
	})
}

// Two handlers that undo each other's write on every pass make a hot loop:
// each write's watch event runs the key again at once. The controller backs
// such a key off like a failing one and says once which handlers and which
// object fight.
func TestFightingHandlersAreBackedOffAndNamed(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	reg := prometheus.NewRegistry()
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{Logger: log, Registerer: reg}})
	c := configMapController(t, f)
	createCM(t, cp.Config(), ns, "fight", nil)

	// Writes are counted in the interval from 2 s to 5 s after the first
	// write: with the default backoff (5 ms doubling) a backed-off key is
	// handled a few times there; a hot loop, as often as the API server
	// takes writes.
	var writes atomic.Int64
	var mu sync.Mutex
	var first time.Time
	var inInterval int
	at := func() {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		if d := now.Sub(first); d >= 2*time.Second && d < 5*time.Second {
			inInterval++
		}
	}
	c.RegisterHandler(t.Context(), "owner-a", labelSetter(t, "a", &writes, at))
	c.RegisterHandler(t.Context(), "owner-b", labelSetter(t, "b", &writes, at))
	start(t, f, 2)

	controlplanetest.Eventually(t, 30*time.Second, "the first write", func() bool { return writes.Load() > 0 })
	time.Sleep(5 * time.Second)
	mu.Lock()
	n := inInterval
	mu.Unlock()
	t.Logf("%d writes in all, %d from 2 s to 5 s after the first", writes.Load(), n)
	const bound = 16
	if n > bound {
		t.Errorf("%d writes from 2 s to 5 s after the first, want at most %d: the fight is not backed off", n, bound)
	}

	var named []*logrus.Entry
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && e.Data["key"] == ns+"/fight" {
			named = append(named, e)
		}
	}
	if len(named) != 1 {
		t.Fatalf("%d warnings for the fighting key, want 1: %v", len(named), named)
	}
	line, err := named[0].String()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"owner-a", "owner-b", ns + "/fight", "v1/ConfigMap"} {
		if !strings.Contains(line, want) {
			t.Errorf("warning does not name %q: %s", want, line)
		}
	}
	if got := configMapMetric(t, reg, "lariat_handler_fights_total"); got != 1 {
		t.Errorf("lariat_handler_fights_total = %v, want 1", got)
	}
}

// A handler that writes an object a few times on its way to what it wants
// (one field per pass), then leaves it alone, is never held back: normal
// convergence records no fight.
func TestConvergingHandlerIsNotHeld(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	reg := prometheus.NewRegistry()
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{Logger: log, Registerer: reg}})
	c := configMapController(t, f)
	const steps = 5
	var writes atomic.Int64
	var settled atomic.Bool
	c.RegisterHandler(t.Context(), "stepper", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return nil, nil
		}
		if len(cm.Data) >= steps {
			settled.Store(true)
			return nil, nil
		}
		cm = cm.DeepCopy()
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[string(rune('a'+len(cm.Data)))] = "x"
		updated, err := kube(cp.Config()).CoreV1().ConfigMaps(cm.Namespace).Update(t.Context(), cm, metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		writes.Add(1)
		return updated, nil
	}))
	c.RegisterHandler(t.Context(), "owner-a", labelSetter(t, "a", &writes, nil))
	createCM(t, cp.Config(), ns, "steps", nil)
	start(t, f, 2)

	controlplanetest.Eventually(t, 30*time.Second, "the handler to reach its last step", settled.Load)
	if got := configMapMetric(t, reg, "lariat_handler_fights_total"); got != 0 {
		t.Errorf("lariat_handler_fights_total = %v for a converging handler, want 0", got)
	}
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			t.Errorf("logged at %s: %s %v", e.Level, e.Message, e.Data)
		}
	}
	if w := writes.Load(); w != steps+1 {
		t.Errorf("%d writes, want %d (one per step and the label)", w, steps+1)
	}
}
