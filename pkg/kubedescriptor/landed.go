package kubedescriptor

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// Landings tells a caller when what the descriptors wanted of an object is
// on the server, and at which resourceVersion: a caller that changed an
// object and waits for an informer to show it at its new value cannot tell
// that by comparing the fields it set with the live object's, because the
// server rewrites some of them (a Secret's stringData is stored as data
// and never returned; a quantity "1000m" written over "1" stores nothing
// new) and others write the object in between (a controller's status at
// the old spec). The descriptor knows: the object its apply returned is
// the one the server stores, and a Retrieve that finds a live object in
// sync with its desired value (see actualValue) has it at that object's
// resourceVersion. Each such landing is numbered, so that a caller can ask
// for one made after a point (Seq), and the informer's object has landed
// once it is that object (UID) at the landing's resourceVersion or later.
//
// One Landings may be shared by the descriptors of several kinds
// (Options.Landings); its methods are safe for concurrent use, and a nil
// *Landings records nothing and knows nothing.
type Landings struct {
	mu   sync.Mutex
	seq  uint64
	last map[string]landing
}

// landing is one record: the state of the apply (or dry run) it stands
// on, which judges drift, and where the object was seen holding it.
type landing struct {
	seq uint64
	uid types.UID
	rv  string
	st  *appliedState
}

// Seq returns the number of the last landing recorded; one recorded later
// has a greater number.
func (l *Landings) Seq() uint64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// Landed tells whether live, the object at key (as an informer shows it),
// holds what a landing recorded after since put there: it is the object
// of that landing (UID) at its resourceVersion or a later one.
func (l *Landings) Landed(key string, since uint64, live runtime.Object) bool {
	rec, ok := l.get(key)
	if !ok || rec.seq <= since {
		return false
	}
	m, err := meta.Accessor(live)
	if err != nil || m.GetUID() != rec.uid {
		return false
	}
	if m.GetResourceVersion() == rec.rv {
		return true
	}
	// Not numbers (another storage than etcd's): only the same version
	// is known not to be older.
	c, err := resourceversion.CompareResourceVersion(m.GetResourceVersion(), rec.rv)
	return err == nil && c > 0
}

// Drifted tells whether live, the object at key, holds other values than
// the server stored for the last landing in the fields the descriptor's
// field manager owns; known is false when no landing of that object
// (UID) with a record of its owned fields is known, and the caller must
// judge otherwise.
func (l *Landings) Drifted(key string, live runtime.Object) (drifted, known bool) {
	rec, ok := l.get(key)
	if !ok || rec.st == nil || rec.st.owned == nil {
		return false, false
	}
	m, err := meta.Accessor(live)
	if err != nil || m.GetUID() != rec.uid {
		return false, false
	}
	return rec.st.drifted(live), true
}

func (l *Landings) get(key string) (landing, bool) {
	if l == nil {
		return landing{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	rec, ok := l.last[key]
	return rec, ok
}

// record notes that obj, the object at key, holds what st records.
func (l *Landings) record(key string, obj runtime.Object, st *appliedState) {
	if l == nil {
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]landing{}
	}
	l.seq++
	l.last[key] = landing{seq: l.seq, uid: m.GetUID(), rv: m.GetResourceVersion(), st: st}
}

// forget drops the record of key (its object deleted).
func (l *Landings) forget(key string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, key)
}

// WrittenSince tells whether live, the object at key (as an informer
// shows it, prev being the version it replaces, or nil), was written by
// someone else since the last landing, in what an apply can write and the
// owned fields (Drifted) cannot show: it is that landing's object (UID) at
// a later resourceVersion, and it differs outside metadata and status
// from prev when prev is not older than the landing (a controller's status
// write, or a label another manager adds, is not asked about; the
// metadata the descriptor sets is owned). Such a
// write can change a field no field manager owns (a Secret's data written
// from its stringData); a caller that repairs drift asks the descriptor,
// whose read judges it with one dry run per such version (see
// outside.go). An object of the last landing's own version, or of an
// older one, is not written since.
func (l *Landings) WrittenSince(key string, prev, live runtime.Object) bool {
	rec, ok := l.get(key)
	if !ok {
		return false
	}
	m, err := meta.Accessor(live)
	if err != nil || m.GetUID() != rec.uid || m.GetResourceVersion() == rec.rv {
		return false
	}
	if c, err := resourceversion.CompareResourceVersion(m.GetResourceVersion(), rec.rv); err == nil && c < 0 {
		return false
	}
	pm, err := meta.Accessor(prev)
	if err != nil || pm.GetUID() != rec.uid {
		return true
	}
	// prev tells only when it is not older than the landing: a version
	// before it may hold what the write put back.
	c, err := resourceversion.CompareResourceVersion(pm.GetResourceVersion(), rec.rv)
	if pm.GetResourceVersion() != rec.rv && (err != nil || c < 0) {
		return true
	}
	return !sameOutsideMeta(prev, live)
}
