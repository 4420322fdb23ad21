package controller_test

import (
	"context"
	"errors"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestRequestsCutShortByStoppingAreNotErrors stops the controllers while a
// handler waits for the API server with the controllers' context: its
// request ends with "context canceled", which is the stop, not a failure
// of the handler, so nothing is logged at warning level or above.
func TestRequestsCutShortByStoppingAreNotErrors(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	f := newFactory(t, cp.Config(), ns, setup{opts: controller.SharedControllerFactoryOptions{Logger: log}})
	c := configMapController(t, f)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	entered := make(chan struct{})
	returned := make(chan error, 1)
	kube := kube(cp.Config())
	c.RegisterHandler(ctx, "status-writer", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if obj == nil || !strings.HasSuffix(key, "/cm") {
			return nil, nil
		}
		close(entered)
		<-ctx.Done()
		// A handler's request with the context it was registered with.
		_, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
		returned <- err
		return nil, err
	}))
	if err := f.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	createCM(t, cp.Config(), ns, "cm", nil)
	waitClosed(t, entered, "the handler begins on cm")
	stop()
	var err error
	select {
	case err = <-returned:
	case <-time.After(hookBound):
		t.Fatalf("waited %s and still not: the handler's request returns", hookBound)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the handler's request returned %v, want context.Canceled", err)
	}
	// Once no worker is left, whatever the stop logged has been logged.
	controlplanetest.Eventually(t, 10*time.Second, "the workers to stop", func() bool { return !workersRunning() })
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			t.Fatalf("logged at %s while stopping: %s %v", e.Level, e.Message, e.Data)
		}
	}
}

// workersRunning reports whether a controller worker is handling a key or
// waiting for one.
func workersRunning() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:goruntime.Stack(buf, true)]
	return strings.Contains(string(buf), "pkg/controller.(*controller).processNext")
}
