package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// crdSchema returns the structural OpenAPI schema of Go type t, the way
// controller-gen derives one (without its markers: lists are atomic), so
// that the crs workload's CRD has the schema size of real ones that embed
// a Pod template.
func crdSchema(t reflect.Type) map[string]any {
	return schemaOf(t, map[reflect.Type]bool{})
}

func schemaOf(t reflect.Type, visiting map[reflect.Type]bool) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[resource.Quantity](), reflect.TypeFor[intstr.IntOrString]():
		return map[string]any{"x-kubernetes-int-or-string": true}
	case reflect.TypeFor[metav1.Time](), reflect.TypeFor[metav1.MicroTime]():
		return map[string]any{"type": "string", "format": "date-time"}
	case reflect.TypeFor[metav1.Duration]():
		return map[string]any{"type": "string"}
	case reflect.TypeFor[metav1.ObjectMeta]():
		// As controller-gen does for embedded object metadata.
		return map[string]any{"type": "object", "properties": map[string]any{
			"labels":      map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			"annotations": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		}}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int64, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), visiting)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), visiting)}
	case reflect.Struct:
		if visiting[t] {
			return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		}
		visiting[t] = true
		defer delete(visiting, t)
		props := map[string]any{}
		addFields(t, props, visiting)
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
}

// addFields adds the JSON properties of struct t to props, those of
// inlined (embedded) structs included.
func addFields(t reflect.Type, props map[string]any, visiting map[reflect.Type]bool) {
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			addFields(ft, props, visiting)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = schemaOf(f.Type, visiting)
	}
}

// installCRD creates the CRD crd and waits until the API server serves it.
func installCRD(ctx context.Context, cs kubernetes.Interface, crd map[string]any) error {
	data, err := json.Marshal(crd)
	if err != nil {
		return err
	}
	rc := cs.Discovery().RESTClient()
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if err := rc.Post().AbsPath(crds).Body(data).Do(ctx).Error(); err != nil {
		return fmt.Errorf("creating the CRD (%d bytes): %w", len(data), err)
	}
	name := crd["metadata"].(map[string]any)["name"].(string)
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		raw, err := rc.Get().AbsPath(crds, name).DoRaw(ctx)
		if err != nil {
			return false, nil
		}
		var got struct {
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == "Established" && c.Status == metav1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
