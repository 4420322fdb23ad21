package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Setting is the v1alpha1 version of the v1 Setting, with the same schema:
// the API server serves both versions without a conversion webhook
// (strategy None) and stores v1, which carries +kubebuilder:storageversion.
//
// +kubebuilder:object:root=true
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
