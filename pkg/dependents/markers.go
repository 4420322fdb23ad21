package dependents

import (
	"context"
	"strings"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Readiness lives in the scheduler as markers: values that exist only
// there, put by the loop while an object (or every object of an owner) is
// ready, and named as dependencies by what waits for it. A marker
// Requires what it stands for, so that deleting an owner's values in one
// transaction takes them in reverse order of creation (see
// kvscheduler.OrderingOnly).

// keys builds the scheduler keys of one registration's markers.
type keys struct{ prefix string }

func newKeys(name string) keys { return keys{prefix: "dependents/" + name + "/"} }

// ready is the key of the marker of the object at objKey, as the owner at
// ownerKey keeps it: "ready/<owner key>@<object key>" ('@' is in no
// Kubernetes name). It is the owner's own: an owner refused the object
// (another owner keeps it) or not wanting it never has it put, so what of
// that owner Requires or is After the object waits, and is never created
// on the strength of another owner's object of the same name.
func (k keys) ready(ownerKey, objKey string) string {
	return k.prefix + "ready/" + ownerKey + "@" + objKey
}

// owner is the key of the marker of the owner at ownerKey.
func (k keys) owner(ownerKey string) string { return k.prefix + "owner/" + ownerKey }

// available is the key of the latched marker of the owner at ownerKey
// (see Object.RequiresOwnerAvailable).
func (k keys) available(ownerKey string) string { return k.prefix + "available/" + ownerKey }

// availableOf returns the owner key a latched marker stands for.
func (k keys) availableOf(key string) (string, bool) {
	return strings.CutPrefix(key, k.prefix+"available/")
}

// isMarker tells whether key is one of the registration's markers.
func (k keys) isMarker(key string) bool { return strings.HasPrefix(key, k.prefix) }

// readyOf returns the owner key and the object key a ready marker
// stands for.
func (k keys) readyOf(key string) (ownerKey, objKey string, ok bool) {
	rest, ok := strings.CutPrefix(key, k.prefix+"ready/")
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "@")
}

// ownerOf returns the owner key an owner marker stands for.
func (k keys) ownerOf(key string) (string, bool) {
	return strings.CutPrefix(key, k.prefix+"owner/")
}

// marker is the value of a marker: the keys it Requires.
type marker struct {
	// Needs are the keys of the values the marker stands for.
	Needs []string
	// After are keys it is ordered after (kvscheduler.OrderingOnly): what
	// waits for it is deleted before them, and it stays when they go.
	After []string
}

// String is what the scheduler's history shows.
func (m marker) String() string { return "ready (" + strings.Join(m.Needs, ", ") + ")" }

// markerDescriptor handles the markers of one registration: creating or
// deleting one changes nothing outside the scheduler.
func (k keys) markerDescriptor(name string) *kvscheduler.Descriptor {
	return &kvscheduler.Descriptor{
		Name:        "dependents-" + name,
		NBKeyPrefix: k.prefix,
		KeySelector: k.isMarker,
		Create:      func(context.Context, string, any) (any, error) { return nil, nil },
		Delete:      func(context.Context, string, any, any) error { return nil },
		// A new list is an update, not a re-create, which would take down
		// what waits for the marker.
		Update: func(context.Context, string, any, any, any) (any, error) { return nil, nil },
		Dependencies: func(_ string, v any) []kvscheduler.Dependency {
			m, _ := v.(marker)
			deps := make([]kvscheduler.Dependency, 0, len(m.Needs)+len(m.After))
			for _, key := range m.Needs {
				deps = append(deps, kvscheduler.Dependency{Key: key})
			}
			for _, key := range m.After {
				deps = append(deps, kvscheduler.Dependency{Key: key, Kind: kvscheduler.OrderingOnly})
			}
			return deps
		},
	}
}
