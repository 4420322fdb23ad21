package cache

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decodedPod returns benchPod(i) as a decoder gives it: every string an
// allocation of its own.
func decodedPod(t *testing.T, i int) *corev1.Pod {
	t.Helper()
	p := benchPod(i)
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := &corev1.Pod{}
	if err := out.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	return out
}

// stringsOf returns where each string of obj's exported fields, slices and
// maps lives, in the walk's order, by path.
func stringsOf(obj any) map[string]*byte {
	out := map[string]*byte{}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			out[path] = unsafe.StringData(v.String())
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(path+"."+v.Type().Field(i).Name, v.Field(i))
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				k := fmt.Sprint(it.Key().Interface())
				walk(path+"{key "+k+"}", it.Key())
				walk(path+"{"+k+"}", it.Value())
			}
		}
	}
	walk("", reflect.ValueOf(obj))
	return out
}

// TestInternerSharesStringsAndKeepsValues shows that interning changes no
// value of an object (typed or unstructured) and makes the objects share
// their equal strings, map keys and values included.
func TestInternerSharesStringsAndKeepsValues(t *testing.T) {
	in := newInterner(maxInterned)
	a, b := decodedPod(t, 1), decodedPod(t, 2)
	wantA, wantB := jsonOf(t, a), jsonOf(t, b)
	if unsafe.StringData(a.Spec.Containers[0].Image) == unsafe.StringData(b.Spec.Containers[0].Image) {
		t.Fatal("decoded pods share their strings before interning: the test shows nothing")
	}
	for _, p := range []*corev1.Pod{a, b} {
		if _, err := in.transform(p); err != nil {
			t.Fatal(err)
		}
	}
	if got := jsonOf(t, a); got != wantA {
		t.Errorf("interning changed a pod:\n got  %s\n want %s", got, wantA)
	}
	if got := jsonOf(t, b); got != wantB {
		t.Errorf("interning changed a pod:\n got  %s\n want %s", got, wantB)
	}
	sa, sb := stringsOf(a), stringsOf(b)
	for _, path := range []string{".Spec.Containers[0].Image", ".Spec.Containers[0].Env[3].Value",
		".ObjectMeta.Labels{app}", ".Spec.Tolerations[1].Key", ".Status.ContainerStatuses[1].Image"} {
		if sa[path] == nil || sa[path] != sb[path] {
			t.Errorf("%s: not shared between two pods (%p, %p)", path, sa[path], sb[path])
		}
	}
	if sa[".ObjectMeta.Name"] == nil || sa[".ObjectMeta.Name"] == sb[".ObjectMeta.Name"] {
		t.Error("different names share a string")
	}
	// Each object's own strings stay out of the table, which they would
	// fill and keep alive.
	for _, own := range []string{a.Name, string(a.UID), a.ResourceVersion} {
		if _, ok := in.table[own]; ok {
			t.Errorf("the table holds %q, one object's own", own)
		}
	}

	u1 := &unstructured.Unstructured{}
	u2 := &unstructured.Unstructured{}
	for _, u := range []*unstructured.Unstructured{u1, u2} {
		if err := json.Unmarshal([]byte(`{"apiVersion":"example.dev/v1","kind":"App","metadata":{"name":"x","labels":{"app":"shop"}},"spec":{"images":["registry.example.com/api:v1"],"mode":"fast"}}`), u); err != nil {
			t.Fatal(err)
		}
	}
	want := jsonOf(t, u1)
	for _, u := range []*unstructured.Unstructured{u1, u2} {
		if _, err := in.transform(u); err != nil {
			t.Fatal(err)
		}
	}
	if got := jsonOf(t, u2); got != want {
		t.Errorf("interning changed an unstructured object:\n got  %s\n want %s", got, want)
	}
	m1, _, _ := unstructured.NestedString(u1.Object, "spec", "mode")
	m2, _, _ := unstructured.NestedString(u2.Object, "spec", "mode")
	i1, _, _ := unstructured.NestedStringSlice(u1.Object, "spec", "images")
	if unsafe.StringData(m1) != unsafe.StringData(m2) {
		t.Error("unstructured objects' equal values not shared")
	}
	if images := u2.Object["spec"].(map[string]any)["images"].([]any); unsafe.StringData(images[0].(string)) != unsafe.StringData(i1[0]) {
		t.Error("unstructured objects' equal list items not shared")
	}
}

// TestInternerNeverRewritesAnInternedObject shows what makes interning safe
// for objects already stored: client-go hands them to the transform again
// (resyncs, Replace) while handlers read them, and interning them again
// replaces none of their strings, also after the table filled up with
// other objects' strings in between (a write would race with the readers;
// run with -race, as the repository's tests are).
func TestInternerNeverRewritesAnInternedObject(t *testing.T) {
	for _, limit := range []int{maxInterned, 40} {
		in := newInterner(limit)
		first := decodedPod(t, 0)
		if _, err := in.transform(first); err != nil {
			t.Fatal(err)
		}
		before := stringsOf(first)
		for i := 1; i < 50; i++ {
			if _, err := in.transform(decodedPod(t, i)); err != nil {
				t.Fatal(err)
			}
		}
		// A handler reads the stored object while it is interned again:
		// under the race detector, any write (even of an equal value)
		// fails the test.
		read := make(chan string)
		go func() { read <- jsonOf(t, first) }()
		if _, err := in.transform(first); err != nil {
			t.Fatal(err)
		}
		<-read
		after := stringsOf(first)
		if len(after) != len(before) {
			t.Fatalf("limit %d: %d strings after, %d before", limit, len(after), len(before))
		}
		for path, at := range before {
			if after[path] != at {
				t.Errorf("limit %d: %s replaced when interned again", limit, path)
			}
		}
		if len(in.table) > limit {
			t.Errorf("the table holds %d strings, more than its limit %d", len(in.table), limit)
		}
	}
}
