package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane"
)

// prepareCluster starts a control plane and fills the namespace with the
// objects every framework will list.
func prepareCluster(ctx context.Context, cfg config, log *logrus.Logger) (*controlplane.ControlPlane, error) {
	log.Info("starting a control plane")
	quiet := logrus.New()
	quiet.SetLevel(logrus.WarnLevel)
	cluster, err := controlplane.Start(ctx, controlplane.Options{Logger: quiet})
	if err != nil {
		return nil, err
	}
	cs := clientset(cluster.Config())
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cfg.namespace}}, metav1.CreateOptions{})
	if err != nil {
		cluster.Stop()
		return nil, err
	}
	w := workloads[cfg.workload]
	if w.setup != nil {
		if err := w.setup(ctx, cs); err != nil {
			cluster.Stop()
			return nil, err
		}
	}
	log.Infof("creating %d %s", cfg.objects, w.describe)
	began := time.Now()
	var done atomic.Int64
	err = forEach(ctx, cfg.objects, 16, func(ctx context.Context, i int) error {
		if err := w.create(ctx, cs, cfg.namespace, objectName(w, i), i); err != nil {
			return err
		}
		if n := done.Add(1); n%2000 == 0 {
			log.Infof("  %d of %d", n, cfg.objects)
		}
		return nil
	})
	if err != nil {
		cluster.Stop()
		return nil, err
	}
	log.Infof("created in %s", time.Since(began).Round(time.Millisecond))
	// The size an object has on the wire, as the frameworks will list it.
	apiPath := w.apiPath
	if apiPath == "" {
		apiPath = "/api/v1"
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath(apiPath, "namespaces", cfg.namespace, w.resource, objectName(w, 0)).DoRaw(ctx)
	if err != nil {
		cluster.Stop()
		return nil, err
	}
	log.Infof("each object is about %d bytes of JSON, managedFields included", len(raw))
	return cluster, nil
}

func objectName(w workload, i int) string { return fmt.Sprintf("%s%05d", w.prefix, i) }

// payload is the ~2 KB of data every object carries.
var payload = strings.Repeat("lariat benchmark payload ", 80)[:2000]

func applyConfigMap(ctx context.Context, cs kubernetes.Interface, ns, name string) error {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "bench"}},
		Data:       map[string]string{"payload": payload, "gen": "initial"},
	}
	data, err := json.Marshal(cm)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "bench"})
	return err
}

// setGen changes one ConfigMap with a merge patch, the cheapest real update.
func setGen(ctx context.Context, cs kubernetes.Interface, ns, name, gen string) error {
	patch := fmt.Sprintf(`{"data":{"gen":%q}}`, gen)
	_, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// clientset returns a client without client-side throttling, so writers
// are limited by the API server alone, the same for every framework.
func clientset(cfg *rest.Config) *kubernetes.Clientset {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	return kubernetes.NewForConfigOrDie(cfg)
}

// forEach runs fn for 0..n-1 on workers goroutines and returns the first
// error.
func forEach(ctx context.Context, n, workers int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
