package operator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

const (
	// LabelApp carries the WebApp's name on its objects and pods.
	LabelApp = "app.kubernetes.io/name"
	// AnnotationConfigHash on the pod template holds a hash of the
	// ConfigMap's data, so that a configuration change rolls the pods.
	AnnotationConfigHash = "demo.lariat.dev/config-hash"
	// URLKeySuffix ends the ConfigMap keys that hold a dependency's
	// address: "<dependency>.url".
	URLKeySuffix = ".url"
)

// childMeta is the metadata of every object of app: named after it, in its
// namespace, labelled, and owned by it (so that, on a cluster with a
// garbage collector, they also go when the WebApp goes).
func childMeta(app *demov1.WebApp) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      app.Name,
		Namespace: app.Namespace,
		Labels:    selector(app),
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: webAppKind.GroupVersion().String(), Kind: webAppKind.Kind,
			Name: app.Name, UID: app.UID, Controller: ptr.To(true),
		}},
	}
}

func selector(app *demov1.WebApp) map[string]string { return map[string]string{LabelApp: app.Name} }

// renderConfigMap renders a WebApp's ConfigMap: its own configuration plus
// the in-cluster URL of every WebApp it depends on. The URL needs the other
// WebApp's port, so a change to one WebApp re-renders its dependents; the
// inventory lists them in the event's touched WebApps.
func renderConfigMap(inv *inventory, app *demov1.WebApp) runtime.Object {
	data := make(map[string]string, len(app.Spec.Config)+len(app.Spec.DependsOn))
	maps.Copy(data, app.Spec.Config)
	for _, dep := range app.Spec.DependsOn {
		if other, ok := inv.apps[appKey(app.Namespace, dep)]; ok {
			data[dep+URLKeySuffix] = fmt.Sprintf("http://%s.%s.svc:%d", dep, app.Namespace, other.Spec.Port)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: childMeta(app), Data: data}
	cm.SetGroupVersionKind(configMapKind)
	return kubedescriptor.DependsOn(cm, dependencyKeys(app)...)
}

// buildDeployment builds a WebApp's Deployment. It reads the ConfigMap the
// renderer put into the same transaction, to stamp its hash on the pod
// template: handler order is how one handler builds on another's output.
func buildDeployment(txn eventloop.ResyncOperations, app *demov1.WebApp) runtime.Object {
	cmKey := ConfigMapKey(app.Namespace, app.Name)
	cm, _ := txn.Get(cmKey).(*corev1.ConfigMap)
	port := app.Spec.Port
	d := &appsv1.Deployment{
		ObjectMeta: childMeta(app),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(ptr.Deref(app.Spec.Replicas, 1)),
			Selector: &metav1.LabelSelector{MatchLabels: selector(app)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      selector(app),
					Annotations: map[string]string{AnnotationConfigHash: hashData(cm)},
				},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:    "app",
					Image:   app.Spec.Image,
					Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: port}},
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: app.Name}}}},
				}}},
			},
		},
	}
	d.SetGroupVersionKind(deploymentKind)
	return kubedescriptor.DependsOn(d, append([]string{cmKey}, dependencyKeys(app)...)...)
}

// hashData hashes a ConfigMap's data in key order.
func hashData(cm *corev1.ConfigMap) string {
	h := sha256.New()
	if cm != nil {
		for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
			fmt.Fprintf(h, "%s=%s\x00", k, cm.Data[k])
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
