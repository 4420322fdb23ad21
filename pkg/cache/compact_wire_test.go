package cache

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// wirePod is a Pod with what a real one carries, managedFields included.
func wirePod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "shop", UID: "u-1", ResourceVersion: "42", Generation: 3,
			Labels:          map[string]string{"app": "web", "tier": "front"},
			Annotations:     map[string]string{"note": "kept"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-1"}},
			Finalizers:      []string{"example.com/f"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
			},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7"},
	}
}

// protobufBytes encodes obj as the API server writes a watch event's object.
func protobufBytes(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCompactWireKeepsTheObjectWithoutManagedFields shows that a Pod read
// from the wire decodes to the Pod the decoded path stores (all of it but
// managedFields), with the metadata the cache keeps beside it read right.
func TestCompactWireKeepsTheObjectWithoutManagedFields(t *testing.T) {
	c, err := newCodec(&corev1.Pod{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	pod := wirePod()
	data := protobufBytes(t, pod)
	o := c.fromWire(data[len(protobufMagic):], "v1", "Pod")
	if o == nil {
		t.Fatal("a Pod in protobuf was not read from the wire")
	}
	if o.Namespace != "shop" || o.Name != "web-0" || o.ResourceVersion != "42" || len(o.Labels) != 2 || o.Labels["tier"] != "front" {
		t.Fatalf("metadata kept beside the object: %+v", o.compactMeta)
	}
	got, err := o.decode(false)
	if err != nil {
		t.Fatal(err)
	}
	want := pod.DeepCopy()
	want.ManagedFields = nil
	want.TypeMeta = metav1.TypeMeta{} // stamped by the client's watch, not kept in protobuf
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Fatalf("decoded from the wire form:\n%s\nwant:\n%s", g, w)
	}
	if c.wired.Load() != 1 {
		t.Fatalf("wired = %d, want 1", c.wired.Load())
	}
}

// TestCompactWireLeavesOtherObjectsToTheDecoder shows that what is not an
// object of the kind with a name (a bookmark, a Status, another kind, bytes
// cut short anywhere) is not read from the wire, and reading it panics not.
func TestCompactWireLeavesOtherObjectsToTheDecoder(t *testing.T) {
	c, err := newCodec(&corev1.Pod{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	bookmark := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	others := map[string]runtime.Object{
		"bookmark":  bookmark,
		"status":    &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure, Code: 410},
		"configmap": &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "x"}},
	}
	for what, obj := range others {
		if o := c.fromWire(protobufBytes(t, obj)[len(protobufMagic):], "v1", "Pod"); o != nil {
			t.Errorf("a %s was read from the wire as %+v", what, o.compactMeta)
		}
	}
	data := protobufBytes(t, wirePod())[len(protobufMagic):]
	for n := range len(data) {
		if o := c.fromWire(data[:n], "v1", "Pod"); o != nil {
			if _, err := o.decode(false); err != nil {
				t.Errorf("%d of %d bytes read from the wire, and then: %v", n, len(data), err)
			}
		}
	}
}

// BenchmarkCompactArrival measures what a compact cache does with one Pod of
// a watch event as the API server writes it (protobuf, managedFields from
// three managers): decoded whole by client-go, stripped and encoded again
// (decoded), or kept from the wire bytes (wire).
func BenchmarkCompactArrival(b *testing.B) {
	pod := benchPod(7)
	pod.APIVersion, pod.Kind = "v1", "Pod"
	fields := []byte(`{"f:metadata":{"f:annotations":{".":{},"f:prometheus.io/path":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"6f1c2a9e\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"api\"}":{".":{},"f:args":{},"f:env":{},"f:image":{},"f:ports":{},"f:resources":{}}}}}`)
	for _, m := range []string{"kube-controller-manager", "istio-injector", "kubelet"} {
		pod.ManagedFields = append(pod.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields}})
	}
	var buf bytes.Buffer
	s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	if err := s.Encode(&pod, &buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.Run("decoded", func(b *testing.B) {
		c, _ := newCodec(&corev1.Pod{}, 0)
		b.ReportAllocs()
		for b.Loop() {
			obj, _, err := s.Decode(data, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			stripped, _ := StripMetadata(obj)
			if _, err := c.encode(stripped); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wire", func(b *testing.B) {
		c, _ := newCodec(&corev1.Pod{}, 0)
		b.ReportAllocs()
		for b.Loop() {
			if c.fromWire(data[len(protobufMagic):], "v1", "Pod") == nil {
				b.Fatal("not read from the wire")
			}
		}
	})
}
