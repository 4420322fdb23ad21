package crd

import (
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// Type describes a CRD of one served version, as wrangler's crd.CRD does,
// for kinds that have no generated manifest. Prefer the generator's
// manifests: their schemas validate and default from the Go types.
type Type struct {
	// GVK is the kind and its one version.
	GVK schema.GroupVersionKind
	// Plural is the resource name; empty means the kind's plural as
	// wrangler guesses it ("policies" for Policy).
	Plural string
	// NonNamespaced makes the kind cluster-scoped.
	NonNamespaced bool
	// Schema validates the objects; nil keeps every field (wrangler's
	// default, x-kubernetes-preserve-unknown-fields).
	Schema *apiextensionsv1.JSONSchemaProps
	// Status enables the status subresource.
	Status bool
	// ShortNames and Categories are the kind's other names in kubectl.
	ShortNames []string
	Categories []string
	// Columns are kubectl's extra printer columns.
	Columns []apiextensionsv1.CustomResourceColumnDefinition
}

// CRD returns the CustomResourceDefinition t describes.
func (t Type) CRD() *apiextensionsv1.CustomResourceDefinition {
	plural := t.Plural
	if plural == "" {
		plural = strings.ToLower(guessPlural(t.GVK.Kind))
	}
	scope := apiextensionsv1.NamespaceScoped
	if t.NonNamespaced {
		scope = apiextensionsv1.ClusterScoped
	}
	s := t.Schema
	if s == nil {
		s = &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	}
	version := apiextensionsv1.CustomResourceDefinitionVersion{
		Name: t.GVK.Version, Served: true, Storage: true,
		Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: s.DeepCopy()},
		AdditionalPrinterColumns: t.Columns,
	}
	if t.Status {
		version.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + t.GVK.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: t.GVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: plural, Singular: strings.ToLower(t.GVK.Kind), Kind: t.GVK.Kind, ListKind: t.GVK.Kind + "List",
				ShortNames: t.ShortNames, Categories: t.Categories,
			},
			Scope:    scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version},
		},
	}
}

// guessPlural forms a kind's plural by wrangler's rule (its
// name.GuessPluralName), so that a port of crd.NamespacedType installs the
// CRD the cluster already has rather than a second one with the same kind.
// apimachinery's meta.UnsafeGuessKindToResource differs ("gatewaies"), and
// the code generator's (controller-tools') agrees for the usual kinds but
// not for those ending in f or fe, where wrangler only appends "ves".
func guessPlural(kind string) string {
	has := func(suffixes ...string) bool {
		return slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(kind, s) })
	}
	n := len(kind)
	switch {
	case kind == "" || strings.EqualFold(kind, "Endpoints"):
		return kind
	case has("s", "ch", "x", "sh"):
		return kind + "es"
	case has("f", "fe"):
		return kind + "ves"
	case has("y") && n > 2 && !strings.ContainsAny(kind[n-2:n-1], "aeiou"):
		return kind[:n-1] + "ies"
	}
	return kind + "s"
}
