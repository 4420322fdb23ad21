package controller_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// staleUpdate updates cm with a resourceVersion, rv, that the API server has
// moved past, for a real conflict error.
func staleUpdate(cm *corev1.ConfigMap, rv string) error {
	stale := cm.DeepCopy()
	stale.ResourceVersion = rv
	stale.Data = map[string]string{"v": "stale"}
	_, err := kube(cp.Config()).CoreV1().ConfigMaps(cm.Namespace).Update(context.Background(), stale, metav1.UpdateOptions{})
	return err
}

func TestRealErrorsJoinedWithRoutineOnesAreLogged(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		Logger:  log,
		Backoff: controller.Backoff{Base: time.Hour}, // one round per key is enough
	}})
	c := configMapController(t, f)
	// Each ConfigMap is created, then changed once, so that an update with
	// the resourceVersion of its creation is a real conflict.
	rvs := map[string]string{}
	for _, name := range []string{"joined", "wrapped", "routine"} {
		cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
		cm, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs[name] = cm.ResourceVersion
		cm.Data = map[string]string{"v": "1"}
		if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	ran := map[string]bool{}
	c.RegisterHandler(t.Context(), "mixed", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || cm.Data["v"] != "1" {
			return nil, nil // not yet the changed version
		}
		conflict := staleUpdate(cm, rvs[cm.Name])
		if !apierrors.IsConflict(conflict) {
			return nil, fmt.Errorf("wanted a conflict from the stale update, got %v", conflict)
		}
		mu.Lock()
		ran[cm.Name] = true
		mu.Unlock()
		switch cm.Name {
		case "joined":
			return nil, errors.Join(errors.New("disk full"), conflict)
		case "wrapped":
			return nil, fmt.Errorf("sync: %w", errors.Join(controller.RetryQuietly(errors.New("queue full")), errors.New("quota exceeded"), conflict))
		default:
			return nil, fmt.Errorf("sync: %w", errors.Join(controller.RetryQuietly(errors.New("queue full")), conflict))
		}
	}))
	start(t, f, 1)

	errorLine := func(key, text string) bool {
		for _, e := range hook.AllEntries() {
			if e.Level <= logrus.ErrorLevel && e.Data["key"] == key && strings.Contains(e.Message, text) {
				return true
			}
		}
		return false
	}
	controlplanetest.Eventually(t, 30*time.Second, "the real error joined with a conflict at error level", func() bool {
		return errorLine(ns+"/joined", "disk full")
	})
	controlplanetest.Eventually(t, 30*time.Second, "the real error wrapped with routine ones at error level", func() bool {
		return errorLine(ns+"/wrapped", "quota exceeded")
	})
	controlplanetest.Eventually(t, 30*time.Second, "the routine key handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ran["routine"]
	})
	controlplanetest.Eventually(t, 30*time.Second, "the routine key's retry logged", func() bool {
		for _, e := range hook.AllEntries() {
			if e.Data["key"] == ns+"/routine" {
				return true
			}
		}
		return false
	})
	for _, e := range hook.AllEntries() {
		if e.Data["key"] == ns+"/routine" && e.Level <= logrus.WarnLevel {
			t.Errorf("an error made only of routine causes logged at %s: %s", e.Level, e.Message)
		}
	}
}
