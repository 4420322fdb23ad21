package kubebridge_test

import (
	"context"
	"fmt"
	"io"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// settingsHandler desires one value per ConfigMap: its "v" entry. It builds
// everything from the snapshot on resync and follows single changes after.
type settingsHandler struct{ updated chan struct{} }

func (h *settingsHandler) String() string                    { return "settings" }
func (h *settingsHandler) HandlesEvent(eventloop.Event) bool { return true }
func (h *settingsHandler) Revert(eventloop.Event) error      { return nil }

func (h *settingsHandler) Resync(_ eventloop.Event, state any, _ int, txn eventloop.ResyncOperations) error {
	st, _ := state.(kubebridge.State)
	for key, obj := range st[kubebridge.ResourceName(corev1.SchemeGroupVersion.WithKind("ConfigMap"))] {
		txn.Put("setting/"+key, obj.(*corev1.ConfigMap).Data["v"])
	}
	return nil
}

func (h *settingsHandler) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	change, ok := ev.(*kubebridge.KubeStateChange)
	if !ok {
		return "", nil
	}
	if change.NewValue == nil {
		txn.Delete("setting/" + change.Key)
		return "deleted", nil
	}
	// PrevValue is what the loop saw last, not what the informer saw.
	prev, next := change.PrevValue.(*corev1.ConfigMap), change.NewValue.(*corev1.ConfigMap)
	fmt.Printf("%s: %s -> %s\n", change.Key, prev.Data["v"], next.Data["v"])
	txn.Put("setting/"+change.Key, next.Data["v"])
	h.updated <- struct{}{}
	return "updated", nil
}

// ConfigMaps of one namespace feed a loop: first as the startup resync's
// snapshot, then change by change.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := logrus.New()
	log.SetOutput(io.Discard)
	const ns = "kubebridge-example"
	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	cms := kube.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"v": "10"}}, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}

	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, Logger: log})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		fmt.Println(err)
		return
	}

	// The order matters: watch, configure, start the loop, start the
	// factory, then start the bridge, which pushes the startup resync.
	bridge := kubebridge.New(factory, log)
	if err := bridge.Watch(ctx, &corev1.ConfigMap{}); err != nil {
		fmt.Println(err)
		return
	}
	handler := &settingsHandler{updated: make(chan struct{}, 1)}
	committer := eventlooptest.NewCommitter() // a KV scheduler in an operator
	opts := eventloop.Options{Handlers: []eventloop.EventHandler{handler}, Committer: committer, Logger: logrus.NewEntry(log)}
	bridge.Configure(&opts)
	loop, err := eventloop.New(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	if err := loop.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := factory.Start(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	if err := bridge.Start(ctx, loop); err != nil {
		fmt.Println(err)
		return
	}

	cm.Data["v"] = "20"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	<-handler.updated
	// Stop processes what is queued, so history and state are complete.
	if err := loop.Stop(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, rec := range loop.History().Records() {
		fmt.Printf("#%d %s (%s)\n", rec.SeqNum, rec.Name, rec.Method)
	}
	fmt.Println(committer.State())
	// Output:
	// kubebridge-example/limits: 10 -> 20
	// #0 Kubernetes Resync (FullResync)
	// #1 Kubernetes State Change (Update)
	// #2 Shutdown (Update)
	// map[setting/kubebridge-example/limits:20]
}
