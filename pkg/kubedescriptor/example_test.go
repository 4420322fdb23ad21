package kubedescriptor_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Example commits a Deployment before the ConfigMap it depends on: it waits
// as PENDING until the ConfigMap is committed, and is then created.
func Example() {
	ctx := context.Background()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	kube := kubernetes.NewForConfigOrDie(cp.Config())
	ns := "kubedescriptor-example"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fmt.Println(err)
		return
	}
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, obj := range []runtime.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}} {
		// Requests end with the transaction's context (a Commit's, or the
		// scheduler's); Context bounds those of the value comparator.
		d, err := kubedescriptor.ForObject(obj, kubedescriptor.Options{Clients: clients, FieldManager: "example", Namespace: ns,
			Context: s.Context()})
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			fmt.Println(err)
			return
		}
	}

	cm := configMap(ns)
	cmKey, _ := kubedescriptor.Key(cm)
	dep := deployment(ns) // annotated with kubedescriptor.DependsOn(dep, cmKey)
	depKey, _ := kubedescriptor.Key(dep)

	if _, err := s.StartNBTransaction().SetValue(depKey, dep).Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	st := s.GetValueStatus(depKey)
	fmt.Println(depKey, st.State, st.UnmetDependencies)

	if _, err := s.StartNBTransaction().SetValue(cmKey, cm).Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(depKey, s.GetValueStatus(depKey).State)
	live, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("managed by", live.Labels[kubedescriptor.LabelManagedBy])
	// Output:
	// apps/Deployment/kubedescriptor-example/web PENDING [core/ConfigMap/kubedescriptor-example/web-config]
	// apps/Deployment/kubedescriptor-example/web CONFIGURED
	// managed by example
}
