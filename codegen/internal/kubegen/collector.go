package kubegen

import (
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// NewCollector returns a marker collector that knows the markers of the
// deepcopy and CRD generators and those registered by extra; one collector
// is shared by every reader of the loaded packages, since it caches parsed
// markers per package.
func NewCollector(extra ...func(*markers.Registry) error) (*markers.Collector, error) {
	reg := &markers.Registry{}
	if err := (deepcopy.Generator{}).RegisterMarkers(reg); err != nil {
		return nil, err
	}
	if err := (crd.Generator{}).RegisterMarkers(reg); err != nil {
		return nil, err
	}
	for _, register := range extra {
		if err := register(reg); err != nil {
			return nil, err
		}
	}
	return &markers.Collector{Registry: reg}, nil
}
