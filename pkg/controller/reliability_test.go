package controller_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestReliability runs against its own control plane, because it stops the
// API server and compacts etcd. The API server reads watches straight from
// etcd and compacts every second, so an old resourceVersion becomes "too
// old" quickly, which is what forces a client that was cut off to relist.
func TestReliability(t *testing.T) {
	own := controlplanetest.Start(t, controlplane.Options{APIServerFlags: []string{
		"--watch-cache=false",
		"--etcd-compaction-interval=1s",
	}})

	t.Run("deletion during a watch gap arrives as nil", func(t *testing.T) {
		ns := controlplanetest.Namespace(t, own.Config())
		createCM(t, own.Config(), ns, "doomed", nil)
		proxy, proxied := controlplanetest.NewProxy(t, own.Config())
		f := newFactory(t, proxied, ns, setup{})
		c, err := f.ForKind(configMapGVK)
		if err != nil {
			t.Fatal(err)
		}
		var tombstones sync.Map
		_, err = c.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				tombstones.Store(d.Key, true)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		rec := newRecorder()
		c.RegisterHandler(t.Context(), "record", rec)
		start(t, f, 1)
		key := ns + "/doomed"
		controlplanetest.Eventually(t, 30*time.Second, "initial object", func() bool { cm, _ := rec.seen(key); return cm != nil })

		cms := kube(own.Config()).CoreV1().ConfigMaps(ns)
		before, err := cms.Get(t.Context(), "doomed", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		proxy.Cut()
		if err := cms.Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		createCM(t, own.Config(), ns, "bystander", nil)
		waitCompacted(t, own, ns, before.ResourceVersion)
		proxy.Restore()

		controlplanetest.Eventually(t, 2*time.Minute, "deletion seen after the gap", func() bool { cm, ok := rec.seen(key); return ok && cm == nil })
		if _, ok := tombstones.Load(key); !ok {
			t.Error("the deletion did not come through a relist tombstone; the test did not create a real watch gap")
		}
		controlplanetest.Eventually(t, 30*time.Second, "object created during the gap", func() bool { cm, _ := rec.seen(ns + "/bystander"); return cm != nil })
	})

	t.Run("API server restart while objects change loses nothing", func(t *testing.T) {
		ns := controlplanetest.Namespace(t, own.Config())
		const objects, rounds = 20, 10
		for i := range objects {
			createCM(t, own.Config(), ns, fmt.Sprintf("obj-%d", i), map[string]string{"v": "0"})
		}
		f := newFactory(t, own.Config(), ns, setup{})
		c, err := f.ForKind(configMapGVK)
		if err != nil {
			t.Fatal(err)
		}
		rec := newRecorder()
		c.RegisterHandler(t.Context(), "record", rec)
		start(t, f, 2)

		// A writer keeps changing every object, retrying through the outage.
		cms := kube(own.Config()).CoreV1().ConfigMaps(ns)
		writerDone := make(chan error, 1)
		go func() {
			for round := 1; round <= rounds; round++ {
				for i := range objects {
					if err := writeRetrying(t.Context(), cms, fmt.Sprintf("obj-%d", i), fmt.Sprint(round)); err != nil {
						writerDone <- err
						return
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
			writerDone <- nil
		}()
		time.Sleep(300 * time.Millisecond)
		if err := own.StopAPIServer(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := own.StartAPIServer(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := <-writerDone; err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprint(rounds)
		controlplanetest.Eventually(t, 2*time.Minute, "every object's final state", func() bool {
			for i := range objects {
				cm, _ := rec.seen(fmt.Sprintf("%s/obj-%d", ns, i))
				if cm == nil || cm.Data["v"] != want {
					return false
				}
			}
			return true
		})
	})
}

type configMapWriter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error)
	Update(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error)
}

// writeRetrying sets data.v of a configmap, retrying while the API server is
// away or another write got in first.
func writeRetrying(ctx context.Context, cms configMapWriter, name, value string) error {
	var failures atomic.Int64
	return writeCounting(ctx, cms, name, value, &failures)
}

// waitCompacted waits until a watch from resourceVersion is refused as too
// old, which is what the cut-off informer will meet when it comes back.
func waitCompacted(t *testing.T, cp *controlplane.ControlPlane, ns, resourceVersion string) {
	t.Helper()
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	deadline := time.Now().Add(time.Minute)
	for {
		w, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: resourceVersion})
		if err == nil {
			select {
			case e := <-w.ResultChan():
				if e.Type == watch.Error {
					err = apierrors.FromObject(e.Object)
				}
			case <-time.After(200 * time.Millisecond):
			}
			w.Stop()
		}
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return
		}
		var status apierrors.APIStatus
		if err != nil && !errors.As(err, &status) {
			t.Fatalf("watch: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("resourceVersion %s was not compacted within a minute (last: %v)", resourceVersion, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
