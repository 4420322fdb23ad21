package generic_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// slowPrune is a replica's applier transport whose list of a set's
// ConfigMaps in a deletion pass (the first after a read of the owner
// answered NotFound) can be held, and which records the ConfigMaps it
// deletes.
type slowPrune struct {
	mu        sync.Mutex
	hold      chan struct{} // the list waits for it while set
	held      chan struct{} // closed when the list waits
	ownerGone bool          // a read of the owner answered NotFound since hold was set
	deletes   []string
}

func (s *slowPrune) config() *rest.Config {
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			isList := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps") &&
				strings.Contains(r.URL.Query().Get("labelSelector"), apply.LabelSet)
			s.mu.Lock()
			hold, held := s.hold, s.held
			holding := isList && hold != nil && s.ownerGone
			if holding {
				s.hold, s.held, s.ownerGone = nil, nil, false
			}
			if r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/configmaps/") {
				s.deletes = append(s.deletes, r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
			}
			s.mu.Unlock()
			if holding {
				close(held)
				<-hold
			}
			resp, err := rt.RoundTrip(r)
			if err == nil && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/services/web") && resp.StatusCode == http.StatusNotFound {
				s.mu.Lock()
				if s.hold != nil {
					s.ownerGone = true
				}
				s.mu.Unlock()
			}
			return resp, err
		})
	})
	return cfg
}

// ownerReadGate is a replica's transport whose reads of the owner wait,
// once waitFor was called, until the channel it was given is closed.
type ownerReadGate struct {
	mu   sync.Mutex
	wait <-chan struct{}
}

func (g *ownerReadGate) config() *rest.Config {
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			g.mu.Lock()
			wait := g.wait
			g.mu.Unlock()
			if wait != nil && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/services/web") {
				select {
				case <-wait:
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
			}
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

func (g *ownerReadGate) waitFor(ch <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.wait = ch
}

// holdNextList makes the next list of a deletion pass wait until release
// is called; held is closed once it waits.
func (s *slowPrune) holdNextList() (held <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hold, h := make(chan struct{}), make(chan struct{})
	s.hold, s.held = hold, h
	return h, func() { close(hold) }
}

func (s *slowPrune) deleted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.deletes...)
}

// generatingReplica runs a generating handler for Services that makes a
// ConfigMap child-<name>, with its own factory and applier (through cfg),
// and records the UIDs of the owners its handler was given.
type generatingReplica struct {
	mu     sync.Mutex
	owners []types.UID
}

func startGeneratingReplica(t *testing.T, ns string, cfg *rest.Config) *generatingReplica {
	t.Helper()
	r := &generatingReplica{}
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	applier := newApplier(t, cfg, f)
	generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			r.mu.Lock()
			r.owners = append(r.owners, svc.UID)
			r.mu.Unlock()
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child-" + svc.Name}}}, st, nil
		}, nil)
	start(t, f)
	return r
}

func (r *generatingReplica) handled(uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range r.owners {
		if u == uid {
			return true
		}
	}
	return false
}

// TestStalePruneOfARecreatedOwnerSparesItsChildren: two replicas run one
// generating handler. The owner is deleted; replica a's deletion pass
// confirms it is gone, and its list of the children is slow; meanwhile the
// owner is created again under the same name, and replica b applies the
// new owner's child. When a's pass goes on, it must not prune the new
// owner's child: an owner created again is a different owner.
func TestStalePruneOfARecreatedOwnerSparesItsChildren(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := context.Background()
	slow := &slowPrune{}
	a := startGeneratingReplica(t, ns, slow.config())
	// b's deletion pass waits until a's is held in its list: if b went
	// first, it would prune the child and the inventory before a read
	// them, and a would have nothing to list (seen on a loaded machine:
	// the test then waited for a's list for ever).
	bGate := &ownerReadGate{}
	b := startGeneratingReplica(t, ns, bGate.config())
	svcs := kube().CoreV1().Services(ns)
	cms := kube().CoreV1().ConfigMaps(ns)
	create := func() types.UID {
		svc, err := svcs.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return svc.UID
	}
	childOf := func(owner types.UID) *corev1.ConfigMap {
		cm, err := cms.Get(ctx, "child-web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range cm.OwnerReferences {
			if ref.UID == owner {
				return cm
			}
		}
		return nil
	}
	first := create()
	eventually(t, "both replicas handling the first owner", func() bool { return a.handled(first) && b.handled(first) })
	eventually(t, "the first owner's child", func() bool { return childOf(first) != nil })

	held, release := slow.holdNextList()
	bGate.waitFor(held)
	if err := svcs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held: // a confirmed the owner gone and lists its children
	case <-time.After(timeout):
		t.Fatal("a's deletion pass never listed the first owner's children")
	}
	eventually(t, "b pruning the first owner's child", func() bool {
		_, err := cms.Get(ctx, "child-web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	second := create()
	eventually(t, "b applying the second owner's child", func() bool { return childOf(second) != nil })
	child := childOf(second)
	deletesBefore := len(slow.deleted())
	release()
	// a's worker holds the owner's key until its deletion pass is over;
	// then it handles the second owner.
	eventually(t, "a handling the second owner", func() bool { return a.handled(second) })

	now, err := cms.Get(ctx, "child-web", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		t.Errorf("the second owner's child is gone: a's stale pass for the first owner deleted it")
	case err != nil:
		t.Fatal(err)
	case now.UID != child.UID:
		t.Errorf("the second owner's child was replaced (uid %s, was %s): a's stale pass for the first owner deleted it", now.UID, child.UID)
	}
	for _, name := range slow.deleted()[deletesBefore:] {
		if name == "child-web" {
			t.Errorf("a's deletion pass for the first owner (%s) deleted child-web, which the second owner (%s) holds", first, second)
		}
	}
}
