package lasso_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// valuesHandler keeps each ConfigMap's "v" entry as the loop sees it.
type valuesHandler struct {
	mu     sync.Mutex
	values map[string]string
}

func (h *valuesHandler) String() string                    { return "values" }
func (h *valuesHandler) HandlesEvent(eventloop.Event) bool { return true }
func (h *valuesHandler) Revert(eventloop.Event) error      { return nil }

func (h *valuesHandler) Resync(_ eventloop.Event, state any, _ int, _ eventloop.ResyncOperations) error {
	st, _ := state.(kubebridge.State)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.values = map[string]string{}
	for key, obj := range st[kubebridge.ResourceName(configMapGVK)] {
		h.values[key] = obj.(*corev1.ConfigMap).Data["v"]
	}
	return nil
}

func (h *valuesHandler) Update(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
	change, ok := ev.(*kubebridge.KubeStateChange)
	if !ok {
		return "", nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if change.NewValue == nil {
		delete(h.values, change.Key)
		return "deleted", nil
	}
	h.values[change.Key] = change.NewValue.(*corev1.ConfigMap).Data["v"]
	return "updated", nil
}

func (h *valuesHandler) get(key string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.values[key]
	return v, ok
}

// TestBridgeFedByWranglerController: wrangler's generated ConfigMap
// controller, with a wrangler handler of its own, feeds an event loop
// through the bridge: the startup resync, then changes and deletions.
func TestBridgeFedByWranglerController(t *testing.T) {
	e := newEnv(t, nil, 0)
	cms := e.core.Core().V1().ConfigMap()
	s := newSeen()
	cms.OnChange(t.Context(), "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		s.record(key, cm)
		return cm, nil
	})
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	log := logrus.New()
	bridge := e.adapter.NewBridge(log)
	if err := bridge.WatchController(t.Context(), cms); err != nil {
		t.Fatal(err)
	}
	handler := &valuesHandler{}
	opts := eventloop.Options{Handlers: []eventloop.EventHandler{handler}, Committer: eventlooptest.NewCommitter(), Logger: logrus.NewEntry(log)}
	bridge.Configure(&opts)
	loop, err := eventloop.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Close() })
	if err := loop.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	if err := bridge.Start(t.Context(), loop); err != nil {
		t.Fatal(err)
	}

	key := e.ns + "/cm"
	eventually(t, "the startup resync carries the ConfigMap", func() bool { v, _ := handler.get(key); return v == "1" })
	cm.Data["v"] = "2"
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the loop sees the update", func() bool { v, _ := handler.get(key); return v == "2" })
	eventually(t, "wrangler's handler sees it too", func() bool { c, _ := s.last(key); return c != nil && c.Data["v"] == "2" })
	if err := e.kube.CoreV1().ConfigMaps(e.ns).Delete(t.Context(), "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the loop sees the deletion", func() bool { _, ok := handler.get(key); return !ok })
}

// TestBridgeRefusesForeignController: a wrangler controller on wrangler's
// own lasso core is refused, not silently fed from a second informer.
func TestBridgeRefusesForeignController(t *testing.T) {
	e := newEnv(t, nil, 0)
	e.core.Core().V1().ConfigMap() // this factory's ConfigMap controller exists
	own, err := core.NewFactoryFromConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	err = e.adapter.NewBridge(logrus.New()).WatchController(t.Context(), own.Core().V1().ConfigMap())
	if err == nil || !strings.Contains(err.Error(), "not on this factory") {
		t.Fatalf("WatchController of another factory's controller: %v", err)
	}
}
