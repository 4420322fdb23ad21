package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemeGroupVersion is the package's group version.
var SchemeGroupVersion = schema.GroupVersion{Group: "own.lariat.dev", Version: "v1"}

// AddToScheme adds the package's kinds to a scheme.
func AddToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Gadget{}, &GadgetList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
