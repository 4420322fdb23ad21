package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// TestAdv3WaitNamesEveryStuckPassOfEveryRun stops a controller of two
// workers whose handler is stuck in the passes of k1 and k2, starts it
// again (the new run puts k1 and k2 aside for them and gets stuck in k3),
// and stops it again (issue 30, h30a: each pass is in its worker's record,
// read by Wait's report). Once the stop grace has passed, Wait's
// *StillRunningError names the three passes, of both runs, each by its
// handler and with the time it began: none is missing, and the passes put
// aside are not among them. Without a Gate (the pass claimed under the
// handler's name) and with one (the pass names its handlers as they
// start).
func TestAdv3WaitNamesEveryStuckPassOfEveryRun(t *testing.T) {
	for _, gated := range []bool{false, true} {
		t.Run(fmt.Sprintf("gated=%v", gated), func(t *testing.T) {
			entered, release := make(chan string, 8), make(chan struct{})
			var gate Gate
			if gated {
				gate = GateFunc(func(context.Context, string, kruntime.Object) (bool, error) { return true, nil })
			}
			began := time.Now()
			c := adv3ControllerOf(t, []string{"k1", "k2", "k3"}, &Options{StopGrace: 100 * time.Millisecond, Gate: gate}, func(key string) {
				entered <- key
				<-release
			})
			t.Cleanup(func() { close(release) })
			ctx1, stop1 := context.WithCancel(t.Context())
			if err := c.Start(ctx1, 2); err != nil {
				t.Fatal(err)
			}
			stuck := map[string]bool{}
			for len(stuck) < 2 {
				select {
				case k := <-entered:
					stuck[k] = true
				case <-time.After(30 * time.Second):
					t.Fatal("timed out waiting for the first run's two stuck passes")
				}
			}
			stop1()
			ctx2, stop2 := context.WithCancel(t.Context())
			if err := c.Start(ctx2, 2); err != nil {
				t.Fatal(err)
			}
			select {
			case k := <-entered:
				if stuck[k] {
					t.Fatalf("the second run called the handler for %s while the first run's pass of it was under way", k)
				}
				stuck[k] = true
			case <-time.After(30 * time.Second):
				t.Fatal("timed out waiting for the second run's stuck pass")
			}
			stop2()

			waitCtx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			err := c.Wait(waitCtx)
			var still *StillRunningError
			if !errors.As(err, &still) {
				t.Fatalf("Wait = %v, want a *StillRunningError naming ns/k1, ns/k2, ns/k3", err)
			}
			seen := map[string]bool{}
			for _, h := range still.Handlers {
				if seen[h.Key] {
					t.Errorf("Wait names %s twice: %v", h.Key, still.Handlers)
				}
				seen[h.Key] = true
				if h.Handler != "adv3" || h.Since.Before(began) || h.Since.After(time.Now()) {
					t.Errorf("Wait names %+v, want handler adv3 and the time its pass began", h)
				}
			}
			for _, k := range []string{"ns/k1", "ns/k2", "ns/k3"} {
				if !seen[k] {
					t.Errorf("Wait does not name the stuck pass of %s: %v", k, still.Handlers)
				}
			}
		})
	}
}

// adv3ControllerOf is a controller named adv3 with options opts and
// handler h over an informer, run until the test ends, whose store holds a
// ConfigMap ns/<name> for each of names.
func adv3ControllerOf(t *testing.T, names []string, opts *Options, h func(key string)) *controller {
	t.Helper()
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, n := range names {
		list.Items = append(list.Items, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n, ResourceVersion: "1"}})
	}
	lw := &cache.ListWatch{
		ListFunc:  func(metav1.ListOptions) (kruntime.Object, error) { return list.DeepCopy(), nil },
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
	informer := cache.NewSharedIndexInformer(adv3ListWatch{lw}, &corev1.ConfigMap{}, 0, cache.Indexers{})
	log := logrus.New()
	log.SetOutput(io.Discard)
	opts.Logger = log
	c, err := New("adv3", informer, HandlerFunc(func(key string, obj kruntime.Object) error {
		if obj != nil {
			h(key)
		}
		return nil
	}), opts)
	if err != nil {
		t.Fatal(err)
	}
	go informer.RunWithContext(t.Context())
	return c.(*controller)
}
