package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// The crs workload's custom resource: an application whose spec carries a
// whole Pod template, as many operators' kinds do (Deployments' shape),
// so that its CRD has a large schema (the Pod template's, generated from
// the Go types by crdSchema) and its objects are large.
var benchAppGV = schema.GroupVersion{Group: "bench.lariat.dev", Version: "v1"}

// BenchApp is the crs workload's kind.
type BenchApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BenchAppSpec   `json:"spec,omitempty"`
	Status            BenchAppStatus `json:"status,omitempty"`
}

// BenchAppSpec is what the operator's manager applies.
type BenchAppSpec struct {
	Replicas int32                  `json:"replicas,omitempty"`
	Paused   bool                   `json:"paused,omitempty"`
	Template corev1.PodTemplateSpec `json:"template"`
	Config   map[string]string      `json:"config,omitempty"`
}

// BenchAppStatus is what the status manager applies.
type BenchAppStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Replicas           int32              `json:"replicas,omitempty"`
	ReadyReplicas      int32              `json:"readyReplicas,omitempty"`
	Endpoints          []string           `json:"endpoints,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// BenchAppList is a list of BenchApps.
type BenchAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchApp `json:"items"`
}

// DeepCopyInto copies in into out, sharing nothing.
func (in *BenchApp) DeepCopyInto(out *BenchApp) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.Template.DeepCopyInto(&out.Spec.Template)
	out.Spec.Config = maps.Clone(in.Spec.Config)
	out.Status.Endpoints = slices.Clone(in.Status.Endpoints)
	out.Status.Conditions = slices.Clone(in.Status.Conditions) // values only
}

// DeepCopyObject implements runtime.Object.
func (in *BenchApp) DeepCopyObject() runtime.Object {
	out := new(BenchApp)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *BenchAppList) DeepCopyObject() runtime.Object {
	out := &BenchAppList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]BenchApp, len(in.Items))
	for i := range in.Items {
		in.Items[i].DeepCopyInto(&out.Items[i])
	}
	return out
}

func init() {
	// Every framework reads typed objects through client-go's scheme.
	scheme.Scheme.AddKnownTypes(benchAppGV, &BenchApp{}, &BenchAppList{})
	metav1.AddToGroupVersion(scheme.Scheme, benchAppGV)
}

// benchAppCRD is the CRD of BenchApp, with the schema of its Go types.
func benchAppCRD() map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "benchapps." + benchAppGV.Group},
		"spec": map[string]any{
			"group": benchAppGV.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": "benchapps", "singular": "benchapp", "kind": "BenchApp", "listKind": "BenchAppList"},
			"versions": []any{map[string]any{
				"name": benchAppGV.Version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"apiVersion": map[string]any{"type": "string"}, "kind": map[string]any{"type": "string"},
					"metadata": map[string]any{"type": "object"},
					"spec":     crdSchema(typeOf[BenchAppSpec]()),
					"status":   crdSchema(typeOf[BenchAppStatus]()),
				}}},
			}},
		},
	}
}

// applyBenchApp writes BenchApp i as a cluster would: its spec applied by
// the operator, its sidecar metadata by an injector and its status by the
// status subresource's manager, each a field manager of its own.
func applyBenchApp(ctx context.Context, cs kubernetes.Interface, ns, name string, i int) error {
	header := func() map[string]any {
		return map[string]any{"apiVersion": benchAppGV.String(), "kind": "BenchApp", "metadata": map[string]any{"name": name, "namespace": ns}}
	}
	pod := podSpecApply(ns, name, i)
	spec := header()
	spec["metadata"].(map[string]any)["labels"] = pod["metadata"].(map[string]any)["labels"]
	config := map[string]any{}
	for k := range 12 {
		config[fmt.Sprintf("setting-%02d", k)] = fmt.Sprintf("value-of-setting-%02d-for-app-%05d", k, i)
	}
	spec["spec"] = map[string]any{"replicas": 3, "config": config,
		"template": map[string]any{"metadata": map[string]any{"labels": pod["metadata"].(map[string]any)["labels"]}, "spec": pod["spec"]}}
	sidecar := header()
	sidecar["metadata"] = podSidecarApply(ns, name)["metadata"]
	status := header()
	const at = "2026-11-20T10:00:00Z"
	cond := func(t, reason string) map[string]any {
		return map[string]any{"type": t, "status": "True", "lastTransitionTime": at, "reason": reason,
			"message": "the benchmark's application is " + reason, "observedGeneration": 1}
	}
	status["status"] = map[string]any{"observedGeneration": 1, "replicas": 3, "readyReplicas": 3,
		"endpoints":  []any{fmt.Sprintf("10.1.%d.%d:8080", i/256%256, i%256), fmt.Sprintf("10.2.%d.%d:8080", i/256%256, i%256)},
		"conditions": []any{cond("Available", "MinimumReplicasAvailable"), cond("Progressing", "NewReplicaSetAvailable"), cond("Ready", "AllReplicasReady")}}
	path := fmt.Sprintf("/apis/%s/namespaces/%s/benchapps/%s", benchAppGV.String(), ns, name)
	for _, s := range []struct {
		manager, path string
		body          map[string]any
	}{{"bench-operator", path, spec}, {"sidecar-injector", path, sidecar}, {"bench-status", path + "/status", status}} {
		data, err := json.Marshal(s.body)
		if err != nil {
			return err
		}
		err = cs.Discovery().RESTClient().Patch(types.ApplyPatchType).AbsPath(s.path).
			Param("fieldManager", s.manager).Param("force", "true").Body(data).Do(ctx).Error()
		if err != nil {
			return fmt.Errorf("%s applying %s: %w", s.manager, name, err)
		}
	}
	return nil
}

// setBenchAppGen changes one BenchApp's generation marker with a merge patch.
func setBenchAppGen(ctx context.Context, cs kubernetes.Interface, ns, name, gen string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"bench/gen":%q}}}`, gen)
	return cs.Discovery().RESTClient().Patch(types.MergePatchType).
		AbsPath(fmt.Sprintf("/apis/%s/namespaces/%s/benchapps/%s", benchAppGV.String(), ns, name)).
		Body([]byte(patch)).Do(ctx).Error()
}

func benchAppGen(obj runtime.Object) string {
	if a, ok := obj.(*BenchApp); ok {
		return a.Annotations["bench/gen"]
	}
	return ""
}
