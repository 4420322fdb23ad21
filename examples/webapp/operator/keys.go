package operator

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
)

// The kinds the operator watches and creates.
var (
	webAppKind     = demov1.SchemeGroupVersion.WithKind("WebApp")
	configMapKind  = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	deploymentKind = appsv1.SchemeGroupVersion.WithKind("Deployment")
	serviceKind    = corev1.SchemeGroupVersion.WithKind("Service")
)

// Resource names of the kinds in the event loop's state.
var (
	webAppResource     = kubebridge.ResourceName(webAppKind)
	configMapResource  = kubebridge.ResourceName(configMapKind)
	deploymentResource = kubebridge.ResourceName(deploymentKind)
	serviceResource    = kubebridge.ResourceName(serviceKind)
)

// AvailablePrefix starts the keys of the availability markers: the value
// "webapp-available/<namespace>/<name>" exists in the scheduler while that
// WebApp is available, and the objects of WebApps that depend on it list
// it as a dependency.
const AvailablePrefix = "webapp-available/"

// AvailableKey returns the key of a WebApp's availability marker.
func AvailableKey(namespace, name string) string { return AvailablePrefix + namespace + "/" + name }

// ConfigMapKey, DeploymentKey and ServiceKey return the scheduler keys of a
// WebApp's objects, which are all named after the WebApp.
func ConfigMapKey(namespace, name string) string {
	return kubedescriptor.KeyFor(configMapKind, namespace, name)
}

// DeploymentKey returns the scheduler key of a WebApp's Deployment.
func DeploymentKey(namespace, name string) string {
	return kubedescriptor.KeyFor(deploymentKind, namespace, name)
}

// ServiceKey returns the scheduler key of a WebApp's Service.
func ServiceKey(namespace, name string) string {
	return kubedescriptor.KeyFor(serviceKind, namespace, name)
}

// appOfKey returns the WebApp a scheduler key belongs to: every key the
// operator uses ends in "<namespace>/<name>" of its WebApp.
func appOfKey(key string) (namespace, name string, ok bool) {
	parts := strings.Split(key, "/")
	if len(parts) < 3 {
		return "", "", false
	}
	return parts[len(parts)-2], parts[len(parts)-1], true
}

// ownsKey tells whether a scheduler key is one of the operator's.
func ownsKey(key string) bool {
	return strings.HasPrefix(key, AvailablePrefix) ||
		strings.HasPrefix(key, kubedescriptor.KeyPrefix(configMapKind.GroupKind())) ||
		strings.HasPrefix(key, kubedescriptor.KeyPrefix(deploymentKind.GroupKind())) ||
		strings.HasPrefix(key, kubedescriptor.KeyPrefix(serviceKind.GroupKind()))
}

// appKey is the loop's key of a WebApp, "namespace/name".
func appKey(namespace, name string) string { return namespace + "/" + name }

// splitAppKey splits "namespace/name".
func splitAppKey(key string) (namespace, name string) {
	namespace, name, _ = strings.Cut(key, "/")
	return namespace, name
}
