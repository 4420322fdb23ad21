package kubebridge_test

import (
	"context"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// TestChangesAfterTheLoopStoppedAreQuiet stops the loop while the
// controllers still run (they stop with their own context, a moment
// later in an operator): the changes they hand the bridge meanwhile have
// nowhere to go, which is not a handler failure to log and retry.
func TestChangesAfterTheLoopStoppedAreQuiet(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, Logger: log})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	bridge := kubebridge.New(factory, log)
	if err := bridge.Watch(ctx, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	// A handler after the bridge's tells which keys the controller has
	// handled; with one worker, a key is handled (and its error logged)
	// before the next one starts.
	handled := make(chan string, 16)
	cms, err := factory.ForObject(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	cms.RegisterHandler(ctx, "after-bridge", controller.SharedHandlerFunc(func(key string, _ runtime.Object) (runtime.Object, error) {
		handled <- key
		return nil, nil
	}))
	opts := eventloop.Options{Handlers: []eventloop.EventHandler{&recorder{}}, Logger: logrus.NewEntry(log)}
	bridge.Configure(&opts)
	loop, err := eventloop.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	loopCtx, stopLoop := context.WithCancel(ctx)
	if err := loop.Start(loopCtx); err != nil {
		t.Fatal(err)
	}
	if err := factory.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := bridge.Start(ctx, loop); err != nil {
		t.Fatal(err)
	}
	stopLoop()
	if err := loop.Stop(loopCtx); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	kube := kube(cp.Config())
	for _, name := range []string{"late", "later"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for timeout := time.After(time.Minute); ; {
		select {
		case key := <-handled:
			if key != ns+"/later" {
				continue
			}
		case <-timeout:
			t.Fatal("the controller did not handle the ConfigMaps created after the loop stopped")
		}
		break
	}
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			t.Fatalf("logged at %s after the loop stopped: %s %v", e.Level, e.Message, e.Data)
		}
	}
}
