package kubebridge_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

// copier desires a Secret holding each ConfigMap's data.
type copier struct{ ns string }

func (c *copier) String() string                    { return "copier" }
func (c *copier) HandlesEvent(eventloop.Event) bool { return true }
func (c *copier) Revert(eventloop.Event) error      { return nil }

func (c *copier) put(txn eventloop.ResyncOperations, cm *corev1.ConfigMap) {
	s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "copy-" + cm.Name, Namespace: cm.Namespace}, StringData: cm.Data}
	key, _ := kubedescriptor.Key(s)
	txn.Put(key, s)
}

func (c *copier) Resync(_ eventloop.Event, state any, _ int, txn eventloop.ResyncOperations) error {
	st, _ := state.(kubebridge.State)
	for _, obj := range st[kubebridge.ResourceName(corev1.SchemeGroupVersion.WithKind("ConfigMap"))] {
		c.put(txn, obj.(*corev1.ConfigMap))
	}
	return nil
}

func (c *copier) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	if change, ok := ev.(*kubebridge.KubeStateChange); ok && change.NewValue != nil {
		c.put(txn, change.NewValue.(*corev1.ConfigMap))
	}
	return "copied", nil
}

// An operator stops when its context ends (a signal): the controllers and
// the bridge stop with it, the loop closes itself, and then the scheduler
// is closed, which cancels the requests its descriptors have in flight.
// Nothing of that is an error.
func Example_shutdown() {
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	const ns = "shutdown-example"
	kube := controlplanetest.Clientset(cp.Config())
	setup := context.Background()
	if _, err := kube.CoreV1().Namespaces().Create(setup, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(setup, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Data: map[string]string{"v": "10"}}, metav1.CreateOptions{}); err != nil {
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
	ctx, signal := context.WithCancel(context.Background()) // signal.NotifyContext in main
	defer signal()

	sched, err := kvscheduler.New(kvscheduler.Options{}) // Close waits at most CloseTimeout (10 s)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The descriptor's requests end when the scheduler closes.
	secrets, err := kubedescriptor.ForObject(&corev1.Secret{}, kubedescriptor.Options{Clients: clients,
		FieldManager: "shutdown-example", Namespace: ns, Context: sched.Context()})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sched.RegisterDescriptor(ctx, secrets); err != nil {
		fmt.Println(err)
		return
	}
	bridge := kubebridge.New(factory, log)
	if err := bridge.Watch(ctx, &corev1.ConfigMap{}); err != nil {
		fmt.Println(err)
		return
	}
	opts := eventloop.Options{Handlers: []eventloop.EventHandler{&copier{ns: ns}}, Committer: loopcommit.New(sched), Logger: logrus.NewEntry(log)}
	bridge.Configure(&opts)
	loop, err := eventloop.New(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := loop.Start(ctx); err != nil { // when ctx ends, the loop closes itself
		fmt.Println(err)
		return
	}
	defer func() {
		// In reverse order of use: the loop (Stop returns nil once ctx
		// ended: it closed itself), then the scheduler it commits to.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		fmt.Println("loop stopped:", loop.Stop(stopCtx))
		fmt.Println("scheduler closed:", sched.Close())
		fmt.Println("warnings and errors logged:", len(warnings(hook)))
	}()
	if err := factory.Start(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	if err := bridge.Start(ctx, loop); err != nil {
		fmt.Println(err)
		return
	}

	for sched.GetValueStatus(kubedescriptor.KeyFor(corev1.SchemeGroupVersion.WithKind("Secret"), ns, "copy-limits")).State != kvscheduler.Configured {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("copy-limits configured")
	signal()
	<-loop.Exited()
	// Output:
	// copy-limits configured
	// loop stopped: <nil>
	// scheduler closed: <nil>
	// warnings and errors logged: 0
}

// warnings formats the entries at warning level or above.
func warnings(hook *logtest.Hook) []string {
	var out []string
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			out = append(out, fmt.Sprintf("%s: %s %v", e.Level, e.Message, e.Data))
		}
	}
	return out
}
