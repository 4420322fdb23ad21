package generic_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/generated/controllers/core"
	corectl "github.com/lariat-dev/lariat/generated/controllers/core/v1"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// A status handler reports on each Service whether it selects pods. Its
// error becomes the condition (False, with the error as message); without
// an error the condition is True. The status is written only when it
// changed, so the write does not start another round.
func ExampleRegisterStatusHandler() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "status-example"
	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	// Only the example's namespace: the handler must not write the status of
	// the cluster's own Services.
	f, err := core.NewFactoryFromConfigWithOptions(cp.Config(), &core.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	services, err := f.Core().V1().Service()
	if err != nil {
		fmt.Println(err)
		return
	}
	selecting := condition.Cond("Selecting")
	corectl.RegisterServiceStatusHandler(ctx, services, selecting, "selecting",
		func(svc *corev1.Service, status corev1.ServiceStatus) (corev1.ServiceStatus, error) {
			if len(svc.Spec.Selector) == 0 {
				return status, errors.New("spec.selector is empty")
			}
			return status, nil
		})
	if err := f.Start(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}

	for name, selector := range map[string]map[string]string{"web": {"app": "web"}, "external": nil} {
		if _, err := kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{}); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, name := range []string{"web", "external"} {
		for ctx.Err() == nil {
			svc, err := kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
			if c := selecting.Get(svc.Status.Conditions); err == nil && c != nil {
				fmt.Printf("%s %s %s %q\n", name, c.Status, c.Reason, c.Message)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Output:
	// web True Succeeded ""
	// external False Failed "spec.selector is empty"
}
