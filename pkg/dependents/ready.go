package dependents

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// DefaultReady is the readiness rule of an object without ReadyWhen, by
// its kind: a Deployment when its controller has seen its generation and
// reports every replica available; a StatefulSet when it reports every
// replica ready at its current revision's generation; a Job once it is
// Complete; a Service of type LoadBalancer once it has an ingress address
// (other Services, and every other kind, once they exist); a
// CustomResourceDefinition once it is Established. Unstructured objects
// of those kinds are converted first.
func DefaultReady(live runtime.Object) (bool, string) {
	if u, ok := live.(*unstructured.Unstructured); ok {
		typed := typedFor(u.GroupVersionKind())
		if typed == nil {
			return true, ""
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return false, fmt.Sprintf("cannot read it: %v", err)
		}
		live = typed
	}
	switch o := live.(type) {
	case *appsv1.Deployment:
		want := ptr.Deref(o.Spec.Replicas, 1)
		why := fmt.Sprintf("%d/%d replicas available", o.Status.AvailableReplicas, want)
		if o.Status.ObservedGeneration < o.Generation {
			return false, why + unseen(o.Generation)
		}
		return o.Status.AvailableReplicas >= want, why
	case *appsv1.StatefulSet:
		want := ptr.Deref(o.Spec.Replicas, 1)
		why := fmt.Sprintf("%d/%d replicas ready", o.Status.ReadyReplicas, want)
		if o.Status.ObservedGeneration < o.Generation {
			return false, why + unseen(o.Generation)
		}
		return o.Status.ReadyReplicas >= want, why
	case *batchv1.Job:
		for _, c := range o.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("not complete: %d succeeded", o.Status.Succeeded)
	case *corev1.Service:
		if o.Spec.Type == corev1.ServiceTypeLoadBalancer && len(o.Status.LoadBalancer.Ingress) == 0 {
			return false, "no load balancer ingress yet"
		}
		return true, ""
	case *apiextensionsv1.CustomResourceDefinition:
		for _, c := range o.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, "not established"
	}
	return true, ""
}

// unseen says that a workload's controller has not reported on its
// latest spec: its counts are older.
func unseen(generation int64) string {
	return fmt.Sprintf(" (its controller has not seen generation %d yet)", generation)
}

// typedFor returns an empty typed object for the kinds DefaultReady
// judges, nil for the others.
func typedFor(gvk schema.GroupVersionKind) runtime.Object {
	switch gvk.GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		return &appsv1.Deployment{}
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		return &appsv1.StatefulSet{}
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		return &batchv1.Job{}
	case schema.GroupKind{Kind: "Service"}:
		return &corev1.Service{}
	case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
		return &apiextensionsv1.CustomResourceDefinition{}
	}
	return nil
}
