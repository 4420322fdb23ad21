package controller_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestEndlessQuietRetriesAreNamed: a key retried quietly (RetryQuietly, or
// conflicts) is logged at debug level, but one that keeps being retried
// (a shard gate keeping a key for a term that no sharder ends, a queue
// that never drains) is named at warning level once it reached
// controller.QuietRetriesBeforeWarning retries in a row, with the count
// and the cause, so that a key held back for ever is not invisible.
func TestEndlessQuietRetriesAreNamed(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{
		Logger:  log,
		Backoff: controller.Backoff{Base: time.Millisecond, Max: time.Millisecond},
	}})
	c := configMapController(t, f)
	if _, err := kube(cp.Config()).CoreV1().ConfigMaps(ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var passes atomic.Int64
	c.RegisterHandler(t.Context(), "holds", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if obj == nil {
			return nil, nil
		}
		passes.Add(1)
		return nil, controller.RetryQuietly(errors.New("still assigned to an ended term"))
	}))
	start(t, f, 1)

	warned := func() []*logrus.Entry {
		var out []*logrus.Entry
		for _, e := range hook.AllEntries() {
			if e.Level <= logrus.WarnLevel && e.Data["key"] == ns+"/held" {
				out = append(out, e)
			}
		}
		return out
	}
	controlplanetest.Eventually(t, time.Minute, "the key retried quietly past the warning's count", func() bool {
		return passes.Load() > controller.QuietRetriesBeforeWarning+2
	})
	w := warned()
	if len(w) == 0 {
		t.Fatalf("a key retried quietly %d times in a row was never named above debug level", passes.Load())
	}
	if !strings.Contains(w[0].Message, "still assigned to an ended term") {
		t.Errorf("the warning does not say why the key is retried: %q", w[0].Message)
	}
	if len(w) > int(passes.Load())/controller.QuietRetriesBeforeWarning {
		t.Errorf("%d warnings for %d passes: the warning repeats more than once every %d retries", len(w), passes.Load(), controller.QuietRetriesBeforeWarning)
	}
}
