package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Setting is a namespaced kind without status: a key and a value. It is
// served in v1alpha1 too; v1 is the version the API server stores.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=settings,singular=setting
type Setting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Value is the setting's value.
	// +kubebuilder:default="on"
	Value string `json:"value,omitempty"`
}

// SettingList is a list of Settings.
//
// +kubebuilder:object:root=true
type SettingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Setting `json:"items"`
}
