package cache

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// compactMeta is the metadata a compact object keeps beside its encoded
// form: its namespace and name (the store's key, the namespace index), its
// resourceVersion (how the informer tells a resync from a change) and its
// labels (Lists by selector). It implements metav1.Object so that
// client-go's key and index functions read it as they read any object; it
// holds four fields where an ObjectMeta holds fifteen (232 bytes, more
// than a compressed ConfigMap). The other getters return zero values, and
// their setters do nothing: nothing writes to a stored object, and every
// reader that needs more decodes the object.
type compactMeta struct {
	Namespace, Name, ResourceVersion string
	Labels                           map[string]string
}

var _ metav1.Object = &compactMeta{}

// GetNamespace returns the object's namespace.
func (m *compactMeta) GetNamespace() string { return m.Namespace }

// SetNamespace sets the object's namespace.
func (m *compactMeta) SetNamespace(namespace string) { m.Namespace = namespace }

// GetName returns the object's name.
func (m *compactMeta) GetName() string { return m.Name }

// SetName sets the object's name.
func (m *compactMeta) SetName(name string) { m.Name = name }

// GetResourceVersion returns the object's resourceVersion.
func (m *compactMeta) GetResourceVersion() string { return m.ResourceVersion }

// SetResourceVersion sets the object's resourceVersion.
func (m *compactMeta) SetResourceVersion(version string) { m.ResourceVersion = version }

// GetLabels returns the object's labels, shared with the cache.
func (m *compactMeta) GetLabels() map[string]string { return m.Labels }

// SetLabels sets the object's labels.
func (m *compactMeta) SetLabels(labels map[string]string) { m.Labels = labels }

// The fields below are not kept: the getters return zero values.

// GetGenerateName returns "": not kept.
func (*compactMeta) GetGenerateName() string { return "" }

// SetGenerateName does nothing: not kept.
func (*compactMeta) SetGenerateName(string) {}

// GetUID returns "": not kept.
func (*compactMeta) GetUID() types.UID { return "" }

// SetUID does nothing: not kept.
func (*compactMeta) SetUID(types.UID) {}

// GetGeneration returns 0: not kept.
func (*compactMeta) GetGeneration() int64 { return 0 }

// SetGeneration does nothing: not kept.
func (*compactMeta) SetGeneration(int64) {}

// GetSelfLink returns "": not kept.
func (*compactMeta) GetSelfLink() string { return "" }

// SetSelfLink does nothing: not kept.
func (*compactMeta) SetSelfLink(string) {}

// GetCreationTimestamp returns the zero time: not kept.
func (*compactMeta) GetCreationTimestamp() metav1.Time { return metav1.Time{} }

// SetCreationTimestamp does nothing: not kept.
func (*compactMeta) SetCreationTimestamp(metav1.Time) {}

// GetDeletionTimestamp returns nil: not kept.
func (*compactMeta) GetDeletionTimestamp() *metav1.Time { return nil }

// SetDeletionTimestamp does nothing: not kept.
func (*compactMeta) SetDeletionTimestamp(*metav1.Time) {}

// GetDeletionGracePeriodSeconds returns nil: not kept.
func (*compactMeta) GetDeletionGracePeriodSeconds() *int64 { return nil }

// SetDeletionGracePeriodSeconds does nothing: not kept.
func (*compactMeta) SetDeletionGracePeriodSeconds(*int64) {}

// GetAnnotations returns nil: not kept.
func (*compactMeta) GetAnnotations() map[string]string { return nil }

// SetAnnotations does nothing: not kept.
func (*compactMeta) SetAnnotations(map[string]string) {}

// GetFinalizers returns nil: not kept.
func (*compactMeta) GetFinalizers() []string { return nil }

// SetFinalizers does nothing: not kept.
func (*compactMeta) SetFinalizers([]string) {}

// GetOwnerReferences returns nil: not kept.
func (*compactMeta) GetOwnerReferences() []metav1.OwnerReference { return nil }

// SetOwnerReferences does nothing: not kept.
func (*compactMeta) SetOwnerReferences([]metav1.OwnerReference) {}

// GetManagedFields returns nil: not kept.
func (*compactMeta) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }

// SetManagedFields does nothing: not kept.
func (*compactMeta) SetManagedFields([]metav1.ManagedFieldsEntry) {}

// maxLabelSets bounds how many distinct label sets a codec shares; past
// it, objects with new label sets keep their own maps.
const maxLabelSets = 4096

// labelSets shares one map among a kind's objects whose labels are equal:
// the objects of one workload (a Deployment's Pods, an operator's
// ConfigMaps) mostly are, and a map of a few labels takes 300 bytes or
// more, a good part of a compressed object. The shared maps are read
// only, as every stored object's are.
type labelSets struct {
	sets map[string]map[string]string
	key  []byte // scratch for the key of the set being looked up
}

// share returns the one kept map equal to labels, keeping labels as that
// map when there is none yet. Callers hold the codec's lock.
func (s *labelSets) share(labels map[string]string) map[string]string {
	if len(labels) == 0 {
		return labels
	}
	s.key = s.key[:0]
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		// Label keys and values cannot hold a NUL byte, so the key is unambiguous.
		s.key = append(append(append(append(s.key, k...), 0), labels[k]...), 0)
	}
	if kept, ok := s.sets[string(s.key)]; ok {
		return kept
	}
	if s.sets == nil {
		s.sets = map[string]map[string]string{}
	}
	if len(s.sets) < maxLabelSets {
		s.sets[string(s.key)] = labels
	}
	return labels
}
