package apply_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// An owner's desired set shrinks from two ConfigMaps to one: Apply updates
// the one that stays and deletes the one that is no longer desired.
func ExampleApplier_Apply() {
	ctx := context.Background()
	kube := controlplanetest.Clientset(cp.Config())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apply-example"}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	owner, err := kube.CoreV1().ConfigMaps("apply-example").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}

	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	applier, err := apply.New(clients, apply.Options{FieldManager: "example-operator"})
	if err != nil {
		fmt.Println(err)
		return
	}
	set := apply.Set{Owner: owner, ID: "config"}
	child := func(name, value string) runtime.Object {
		// No namespace: a namespaced child takes its owner's.
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value}}
	}

	if err := applier.Apply(ctx, set, child("web", "1"), child("worker", "1")); err != nil {
		fmt.Println(err)
		return
	}
	// DryRun shows what the next Apply will do, without writing.
	plan, err := applier.DryRun(ctx, set, child("web", "2"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("update:", plan.Update, "delete:", plan.Delete)
	if err := applier.Apply(ctx, set, child("web", "2")); err != nil {
		fmt.Println(err)
		return
	}
	left, err := kube.CoreV1().ConfigMaps("apply-example").List(ctx, metav1.ListOptions{LabelSelector: apply.LabelSet})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, cm := range left.Items {
		fmt.Println(cm.Name, cm.Data["v"], "owned by", cm.OwnerReferences[0].Name)
	}
	// Output:
	// update: [ConfigMap apply-example/web] delete: [ConfigMap apply-example/worker]
	// web 2 owned by owner
}
