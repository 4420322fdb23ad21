package model

import (
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Marker names the model reads. The kubebuilder ones are registered by the
// controller-tools generators; the genclient ones only by RegisterMarkers.
const (
	markerGroupName       = "groupName"
	markerVersionName     = "versionName"
	markerRoot            = "kubebuilder:object:root"
	markerResource        = "kubebuilder:resource"
	markerStatus          = "kubebuilder:subresource:status"
	markerStorageVersion  = "kubebuilder:storageversion"
	markerUnservedVersion = "kubebuilder:unservedversion"
	markerGenclient       = "genclient"
	markerNonNamespaced   = "genclient:nonNamespaced"
	markerNoStatus        = "genclient:noStatus"
	markerNoVerbs         = "genclient:noVerbs"
	markerOnlyVerbs       = "genclient:onlyVerbs"
	markerSkipVerbs       = "genclient:skipVerbs"
	markerMethod          = "genclient:method"
	markerReadonly        = "genclient:readonly"
)

// RegisterMarkers registers client-gen's markers (all of its tags), which
// controller-tools does not know, so that +genclient and
// +genclient:nonNamespaced are parsed like the kubebuilder markers and a
// misspelt +genclient marker is recognized as one.
func RegisterMarkers(reg *markers.Registry) error {
	defs := map[string]any{
		// An empty struct, like controller-tools' own flag markers: a bool
		// would demand a value.
		markerGenclient:     present{},
		markerNonNamespaced: present{},
		markerNoStatus:      present{},
		markerNoVerbs:       present{},
		markerReadonly:      present{},
		// Registered with raw arguments so that their comma-separated
		// values (and genclient:method's key=value lists) parse as one
		// marker instead of as +genclient with stray arguments.
		markerOnlyVerbs: markers.RawArguments(nil),
		markerSkipVerbs: markers.RawArguments(nil),
		markerMethod:    markers.RawArguments(nil),
	}
	for _, name := range []string{markerGenclient, markerNonNamespaced, markerNoStatus, markerNoVerbs, markerReadonly, markerOnlyVerbs, markerSkipVerbs, markerMethod} {
		def, err := markers.MakeDefinition(name, markers.DescribesType, defs[name])
		if err != nil {
			return err
		}
		if err := reg.Register(def); err != nil {
			return err
		}
	}
	return nil
}

// present is the value of a marker that takes no arguments.
type present struct{}

// has reports whether a marker without arguments is set.
func has(values markers.MarkerValues, name string) bool {
	return values.Get(name) != nil
}

// flag reports whether a boolean marker is set to true.
func flag(values markers.MarkerValues, name string) bool {
	v, ok := values.Get(name).(bool)
	return ok && v
}

// stringMarker returns a string marker's value, or "".
func stringMarker(values markers.MarkerValues, name string) string {
	v, _ := values.Get(name).(string)
	return v
}
