package generic_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/generated/controllers/core"
	corectl "github.com/lariat-dev/lariat/generated/controllers/core/v1"
	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// Every namespace labelled with a team gets a ConfigMap naming the team,
// owned by the namespace. The handler returns what should exist; the
// applier creates it, follows label changes and prunes it. Generated
// Register<Kind>GeneratingHandler functions call generic.RegisterGeneratingHandler
// with the kind's status accessors filled in.
func ExampleRegisterGeneratingHandler() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Only labelled namespaces are cached, so the handler sees no others.
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Kinds: map[schema.GroupVersionKind]cache.KindOptions{
			corev1.SchemeGroupVersion.WithKind("Namespace"): {LabelSelector: ptr.To("team")},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	coreGroup, err := core.NewFactory(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	namespaces, err := coreGroup.Core().V1().Namespace()
	if err != nil {
		fmt.Println(err)
		return
	}
	applier, err := apply.New(f.ControllerFactory().SharedCacheFactory().SharedClientFactory(), apply.Options{FieldManager: "team-operator"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// No condition: a Namespace's status has no metav1.Condition list.
	corectl.RegisterNamespaceGeneratingHandler(ctx, namespaces, applier, "", "team-config",
		func(ns *corev1.Namespace, status corev1.NamespaceStatus) ([]runtime.Object, corev1.NamespaceStatus, error) {
			return []runtime.Object{&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: ns.Name},
				Data:       map[string]string{"team": ns.Labels["team"]},
			}}, status, nil
		}, nil)
	if err := f.Start(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}

	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "generating-example", Labels: map[string]string{"team": "payments"},
	}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	for ctx.Err() == nil {
		cm, err := kube.CoreV1().ConfigMaps("generating-example").Get(ctx, "team", metav1.GetOptions{})
		if err == nil {
			fmt.Println(cm.Data["team"], "owned by", cm.OwnerReferences[0].Kind, cm.OwnerReferences[0].Name)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Output: payments owned by Namespace generating-example
}
