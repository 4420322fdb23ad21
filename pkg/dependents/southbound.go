package dependents

import "github.com/lariat-dev/lariat/pkg/kubedescriptor"

// southbound is what a registration shares with its Kubernetes
// descriptors: where their writes landed (see updating.go).
type southbound struct {
	landings *kubedescriptor.Landings
}

func newSouthbound() southbound {
	return southbound{landings: &kubedescriptor.Landings{}}
}
