package relatedresource_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/generated/controllers/core"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/relatedresource"
)

// An app (here a ConfigMap) needs a Secret labelled with its name. Without
// Watch, its handler would only notice the Secret at its next change; with
// it, creating the Secret re-runs the app's handler at once.
func ExampleWatch() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "related-example"
	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	f, err := core.NewFactoryFromConfigWithOptions(cp.Config(), &core.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	apps, err := f.Core().V1().ConfigMap()
	if err != nil {
		fmt.Println(err)
		return
	}
	secrets, err := f.Core().V1().Secret()
	if err != nil {
		fmt.Println(err)
		return
	}
	found := make(chan string, 1)
	apps.OnChange(ctx, "credentials", func(key string, app *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if app == nil {
			return nil, nil
		}
		if _, err := secrets.Cache().Get(app.Namespace, app.Name+"-credentials"); err == nil {
			select {
			case found <- key:
			default:
			}
		}
		return nil, nil
	})
	relatedresource.Watch(ctx, "secret-to-app", func(namespace, _ string, obj runtime.Object) ([]relatedresource.Key, error) {
		if app := obj.(*corev1.Secret).Labels["app"]; app != "" {
			return []relatedresource.Key{relatedresource.NewKey(namespace, app)}, nil
		}
		return nil, nil
	}, apps, secrets)
	if err := f.Start(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}

	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "web-credentials", Labels: map[string]string{"app": "web"},
	}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	select {
	case key := <-found:
		fmt.Println(key, "has its credentials")
	case <-ctx.Done():
		fmt.Println(ctx.Err())
	}
	// Output: related-example/web has its credentials
}
