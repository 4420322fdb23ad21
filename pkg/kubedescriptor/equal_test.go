package kubedescriptor_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

func TestEquivalent(t *testing.T) {
	desired := func() *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: map[string]string{"a": "1"}},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	// What the server stores: metadata, defaults and status added.
	live := desired()
	live.ResourceVersion = "42"
	live.UID = "uid"
	live.Labels[kubedescriptor.LabelManagedBy] = "m"
	live.Spec.ClusterIP = "10.0.0.1"
	live.Spec.Type = corev1.ServiceTypeClusterIP
	live.Spec.Ports[0].Protocol = corev1.ProtocolTCP
	live.Spec.Ports[0].TargetPort.IntVal = 80
	live.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}

	otherPort := desired()
	otherPort.Spec.Ports[0].Port = 81
	twoPorts := desired()
	twoPorts.Spec.Ports = append(twoPorts.Spec.Ports, corev1.ServicePort{Port: 443})
	noLabel := desired()
	noLabel.Labels = nil
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "labels": map[string]any{"a": "1"}},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": float64(80)}}},
	}}

	for _, tc := range []struct {
		name     string
		old, new any
		want     bool
	}{
		{"same desired", desired(), desired(), true},
		{"live has defaults", live, desired(), true},
		{"live as new value", desired(), live, true},
		{"changed field", live, otherPort, false},
		{"longer list", live, twoPorts, false},
		{"label removed from desired", desired(), noLabel, false},
		{"unstructured against typed live", live, u, true},
		{"not objects", "a", "a", true},
		{"not objects differ", "a", "b", false},
	} {
		if got := kubedescriptor.Equivalent(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: Equivalent = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseKey(t *testing.T) {
	for _, bad := range []string{"", "core/ConfigMap/ns", "core/ConfigMap//x", "a/b/c/d/e"} {
		if _, err := kubedescriptor.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
	ref, err := kubedescriptor.ParseKey("rbac.authorization.k8s.io/ClusterRole/_/reader")
	if err != nil || ref.Namespace != "" || ref.Group != "rbac.authorization.k8s.io" || ref.String() != "rbac.authorization.k8s.io/ClusterRole/_/reader" {
		t.Fatalf("%+v %v", ref, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}
	if k, err := kubedescriptor.Key(cm); err != nil || k != "core/ConfigMap/ns/c" {
		t.Fatalf("Key = %q, %v", k, err)
	}
	withDeps := kubedescriptor.DependsOn(cm, "core/Secret/ns/s", "core/Secret/ns/s", "apps/Deployment/ns/d")
	if got := withDeps.Annotations[kubedescriptor.AnnotationDependsOn]; got != "core/Secret/ns/s,apps/Deployment/ns/d" {
		t.Fatalf("annotation %q", got)
	}
}
