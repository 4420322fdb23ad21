package cache

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

func (o Options) transform() cache.TransformFunc {
	if o.KeepAllMetadata {
		return o.meta.stamping(safeTransform(o.Transform, o.logger()))
	}
	steps := []cache.TransformFunc{StripMetadata}
	if o.meta != nil {
		// First: the user's transform sees the kind, as in a typed cache.
		steps = []cache.TransformFunc{o.meta.stamp, StripMetadata}
	}
	if o.StripLastApplied {
		steps = append(steps, StripLastApplied)
	}
	if o.Transform != nil {
		steps = append(steps, safeTransform(o.Transform, o.logger()))
	}
	if o.interner != nil {
		// Last: the user's transform may replace strings.
		steps = append(steps, o.interner.transform)
	}
	if len(steps) == 1 {
		return steps[0]
	}
	return func(obj any) (any, error) {
		for _, step := range steps {
			var err error
			if obj, err = step(obj); err != nil {
				return nil, err
			}
		}
		return obj, nil
	}
}

// LastAppliedAnnotation is the annotation kubectl apply stores the whole
// applied object in.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// StripMetadata is the default transform: it drops managedFields, which
// controllers rarely read and which are often larger than the rest of the
// object. Dropping them is safe for objects written back with Update: the
// API server keeps an object's managedFields when an update omits them.
// Objects it does not recognize (such as deletion tombstones) pass
// unchanged.
func StripMetadata(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	// Only when there are any: objects already stripped are handed to the
	// transform again (client-go's Replace, resyncs) while handlers may
	// read them, and even writing nil over nil is a write.
	if m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// StripLastApplied drops the last-applied-configuration annotation; see
// Options.StripLastApplied for when that is safe. Objects it does not
// recognize pass unchanged.
func StripLastApplied(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	if annotations := m.GetAnnotations(); annotations != nil {
		if _, ok := annotations[LastAppliedAnnotation]; ok {
			delete(annotations, LastAppliedAnnotation)
			if len(annotations) == 0 {
				annotations = nil
			}
			m.SetAnnotations(annotations)
		}
	}
	return obj, nil
}
