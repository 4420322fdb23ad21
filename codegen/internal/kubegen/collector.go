package kubegen

import (
	"sigs.k8s.io/controller-tools/pkg/applyconfiguration"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/controller-tools/pkg/rbac"
	"sigs.k8s.io/controller-tools/pkg/webhook"
)

// NewCollector returns a marker collector that knows the markers of the
// deepcopy and CRD generators and those registered by extra; one collector
// is shared by every reader of the loaded packages, since it caches parsed
// markers per package. It also knows the markers of controller-gen's other
// generators (RBAC, webhooks, apply configurations), which API packages
// may carry for other runs of controller-gen: its registry is the set of
// known markers that misspelt ones are told from.
func NewCollector(extra ...func(*markers.Registry) error) (*markers.Collector, error) {
	reg := &markers.Registry{}
	for _, gen := range []genall.Generator{
		deepcopy.Generator{}, crd.Generator{}, rbac.Generator{}, webhook.Generator{}, applyconfiguration.Generator{},
	} {
		if err := gen.RegisterMarkers(reg); err != nil {
			return nil, err
		}
	}
	for _, register := range extra {
		if err := register(reg); err != nil {
			return nil, err
		}
	}
	return &markers.Collector{Registry: reg}, nil
}
