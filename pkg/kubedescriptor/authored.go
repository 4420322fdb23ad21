package kubedescriptor

import (
	"context"
	"sync"

	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The management label alone does not prove that the descriptor made an
// object: a user's copy of one (kubectl get -o yaml, a new name, kubectl
// create) carries every label. Taken for the descriptor's own, a resync
// would delete the copy, and an apply to its name would take it over. So
// each apply also stamps the object with AnnotationAppliedAs, whose value
// names the field manager and the object's own key: a copy under another
// name, namespace or kind carries the stamp of the object it was copied
// from, and is not the descriptor's. A stamp is cheaper than the other
// proof, the field manager's Apply entry in managedFields: the lean cache
// drops managedFields, and a copy made with them kept would carry it too.
//
// Objects applied before the stamp existed carry the label without it.
// Those are proved by the managedFields entry instead (read from the API
// server when the cache dropped them), so an upgrade neither orphans nor
// deletes them wrongly; their next apply stamps them.

// AnnotationAppliedAs is the stamp of authorship the descriptor applies to
// every object with LabelManagedBy: "<field manager>:<key>", the key
// being the object's own (see KeyFor). An object whose label names the
// field manager but whose stamp names another object is a copy: it is
// never retrieved, updated, adopted by the label or deleted.
const AnnotationAppliedAs = "lariat.dev/applied-as"

// appliedAs is the stamp of the object at key applied by fieldManager.
func appliedAs(fieldManager, key string) string {
	return fieldManager + ":" + key
}

// verdicts remembers, by key, what authored found of the objects it had
// to judge by their managedFields or found foreign, with the UID and
// resourceVersion it judged: an unstamped object is not read from the
// API server again until it changes, and a foreign one is named once.
type verdicts struct {
	mu   sync.Mutex
	seen map[string]verdict
}

type verdict struct {
	uid     types.UID
	version string
	ours    bool
}

// get returns the verdict on m, if it was judged at its version.
func (v *verdicts) get(key string, m metav1.Object) (ours, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.seen[key]
	if !ok || at.uid != m.GetUID() || at.version != m.GetResourceVersion() {
		return false, false
	}
	return at.ours, true
}

// put records the verdict on m and tells whether it is news: the first
// one on this object (by UID) or a changed one.
func (v *verdicts) put(key string, m metav1.Object, ours bool) (news bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil {
		v.seen = map[string]verdict{}
	}
	at, ok := v.seen[key]
	v.seen[key] = verdict{uid: m.GetUID(), version: m.GetResourceVersion(), ours: ours}
	return !ok || at.uid != m.GetUID() || at.ours != ours
}

// held tells whether any verdict is remembered.
func (v *verdicts) held() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.seen) > 0
}

// keepOnly drops the verdicts on keys a full list no longer holds: the
// objects went, or lost the label. Without it, every copy a user made and
// deleted would be remembered for the descriptor's lifetime.
func (v *verdicts) keepOnly(listed map[string]bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for key := range v.seen {
		if !listed[key] {
			delete(v.seen, key)
		}
	}
}

// authored tells whether m, which carries the management label of the
// descriptor's field manager, was applied by it: its stamp names it, or,
// unstamped, its managedFields hold an Apply of the field manager. An
// object that is not is named once in Options.Logger.
func (k *kind) authored(ctx context.Context, m metav1.Object) (bool, error) {
	key := KeyFor(k.gvk, m.GetNamespace(), m.GetName())
	stamp, stamped := m.GetAnnotations()[AnnotationAppliedAs]
	if stamped && stamp == appliedAs(k.opts.FieldManager, key) {
		return true, nil
	}
	ours, judged := k.verdicts.get(key, m)
	if !judged {
		if !stamped {
			var err error
			if ours, err = k.appliedUnstamped(ctx, key, m); err != nil {
				return false, err
			}
		}
		if k.verdicts.put(key, m, ours) && !ours && k.opts.Logger != nil {
			k.opts.Logger.WithFields(logrus.Fields{"key": key, "uid": m.GetUID(), "stamp": stamp}).
				Warnf("kubedescriptor: %s carries %s=%s but was not applied by it (a copy of one of its objects?): it is left alone",
					key, LabelManagedBy, k.opts.FieldManager)
		}
	}
	return ours, nil
}

// appliedUnstamped tells whether m, labelled but without a stamp, holds
// an Apply of the field manager in its managedFields, read from the API
// server when m has none (the cache drops them).
func (k *kind) appliedUnstamped(ctx context.Context, key string, m metav1.Object) (bool, error) {
	if len(m.GetManagedFields()) == 0 {
		live, err := k.getLive(ctx, key)
		if err != nil || live == nil || live.GetUID() != m.GetUID() {
			return false, err
		}
		m = live
	}
	for _, e := range m.GetManagedFields() {
		if e.Manager == k.opts.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			return true, nil
		}
	}
	return false, nil
}
