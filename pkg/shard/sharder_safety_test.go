package shard

import (
	"context"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestSharderChangesNothingWhileTheLeaseViewIsBroken: with the sharder cut
// off from the member leases (its objects' view and writes still work), new
// objects stay unassigned and an expired member keeps its objects; once the
// view is back, both are dealt with.
func TestSharderChangesNothingWhileTheLeaseViewIsBroken(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "cm", 100)
	a, b := startMember(t, ring, "a"), startMember(t, ring, "b")
	proxy, leaseCfg := controlplanetest.NewProxy(t, config())
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	o.LeaseConfig = leaseCfg
	s := newSharder(t, config(), ring, o)
	runSharder(t, s)
	before := waitSettled(t, ring, a, b)

	proxy.Cut()
	eventually(t, "the sharder to see its lease view broken", func() bool {
		v := s.view()
		return v != nil && !v.valid
	})
	createConfigMaps(t, ring.Namespace, "late", 20)
	last := b.expire()
	time.Sleep(time.Until(last.Add(2 * memberLease)))
	after := configMapStates(t, ring)
	for name, st := range after {
		if strings.HasPrefix(name, "late-") {
			if st != (state{}) {
				t.Errorf("ConfigMap %s created while the lease view was broken got %+v", name, st)
			}
		} else if st != before[name] {
			t.Errorf("ConfigMap %s changed while the lease view was broken: %+v, was %+v", name, st, before[name])
		}
	}
	proxy.Restore()
	waitSettled(t, ring, a)
}

// TestSharderConfirmsADeathBeforeMovingObjects: the sharder's lease watch
// goes silent (no error: a late view), so a member that keeps renewing
// looks expired to it. The quorum read before any direct move shows the
// member renewed, so its objects stay.
func TestSharderConfirmsADeathBeforeMovingObjects(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "cm", 100)
	a, b := startMember(t, ring, "a"), startMember(t, ring, "b")
	var mute muter
	leaseCfg := config()
	leaseCfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err == nil && req.URL.Query().Get("watch") == "true" {
				resp.Body = &mutedBody{ReadCloser: resp.Body, m: &mute, done: req.Context().Done()}
			}
			return resp, err
		})
	})
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	o.LeaseConfig = leaseCfg
	s := newSharder(t, config(), ring, o)
	runSharder(t, s)
	before := waitSettled(t, ring, a, b)

	mute.set(true)
	defer mute.set(false)
	// Every renewal from now on is invisible to the sharder's watch, so
	// both members look expired a lease duration after now.
	time.Sleep(2 * memberLease)
	if v := s.view(); v == nil || !v.valid || len(v.dead) > 0 || len(v.live) != 2 {
		t.Errorf("members live in the sharder's view: %+v, want both live and none dead", v)
	}
	if after := configMapStates(t, ring); !maps.Equal(before, after) {
		t.Errorf("objects moved off members that kept renewing:\nbefore %v\nafter  %v", before, after)
	}
}

// muter silences watch streams while set.
type muter struct {
	mu sync.Mutex
	on bool
	ch chan struct{} // closed when unset
}

func (m *muter) set(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case on && !m.on:
		m.ch = make(chan struct{})
	case !on && m.on:
		close(m.ch)
	}
	m.on = on
}

func (m *muter) wait(done <-chan struct{}) {
	m.mu.Lock()
	on, ch := m.on, m.ch
	m.mu.Unlock()
	if on {
		select {
		case <-ch:
		case <-done:
		}
	}
}

// mutedBody holds back a watch stream's bytes while its muter is set.
type mutedBody struct {
	io.ReadCloser
	m    *muter
	done <-chan struct{}
}

func (b *mutedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.m.wait(b.done)
	return n, err
}

// TestSharderNeverOverwritesAConcurrentChange: between the sharder's read
// of an unassigned object and its write, another writer assigns the object
// to the other member. The sharder's write fails on the resourceVersion,
// it reads the object again and, finding it on a live member that is not
// the one it wants, asks it to drain instead of taking it.
func TestSharderNeverOverwritesAConcurrentChange(t *testing.T) {
	ring := testRing(t, configMaps)
	a, b := startMember(t, ring, "a"), startMember(t, ring, "b")
	want := Pick(ring.Namespace+"/x", []string{a.id, b.id})
	other := a.id
	if want == a.id {
		other = b.id
	}
	var intercepted atomic.Bool
	var conflicts atomic.Int32
	cfg := config()
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/configmaps/x") && intercepted.CompareAndSwap(false, true) {
				patch := `{"metadata":{"labels":{"` + AssignmentLabel(ring.Name) + `":"` + other + `"}}}`
				if _, err := clientset().CoreV1().ConfigMaps(ring.Namespace).Patch(req.Context(), "x", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Errorf("the concurrent change: %v", err)
				}
			}
			resp, err := next.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusConflict {
				conflicts.Add(1)
			}
			return resp, err
		})
	})
	if _, err := clientset().CoreV1().ConfigMaps(ring.Namespace).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	runSharder(t, newSharder(t, cfg, ring, o))
	eventually(t, "x to drain from the member another writer gave it", func() bool {
		st := configMapStates(t, ring)["x"]
		if st.member == want {
			t.Fatalf("the sharder overwrote the concurrent assignment to %s with %s", other, want)
		}
		return st == state{member: other, draining: true}
	})
	if conflicts.Load() == 0 {
		t.Error("the sharder's write met no conflict")
	}
}

// TestSharderHandsOverToAnotherReplica: two replicas run the ring's
// sharder; only the elected one writes, and when it stops the other takes
// over and assigns what comes next. The stopped one writes nothing after
// its Run returned.
func TestSharderHandsOverToAnotherReplica(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "first", 20)
	a := startMember(t, ring, "a")
	type replica struct {
		s      *Sharder
		writes atomic.Int64 // unix nanos of the last data write sent
		cancel func()
		done   chan error
	}
	start := func(identity string) *replica {
		r := &replica{done: make(chan error, 1)}
		cfg := config()
		cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
			return roundTripper(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/configmaps/") {
					r.writes.Store(time.Now().UnixNano())
				}
				return next.RoundTrip(req)
			})
		})
		o := sharderOptions(nil)
		o.Namespace = ring.Namespace
		o.Leader = append(o.Leader, leader.WithIdentity(identity))
		r.s = newSharder(t, cfg, ring, o)
		ctx, cancel := context.WithCancel(t.Context())
		r.cancel = cancel
		go func() { r.done <- r.s.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			<-r.done
			r.done <- nil
		})
		return r
	}
	one, two := start("one"), start("two")
	waitSettled(t, ring, a)
	var lead, standby *replica
	eventually(t, "a leader", func() bool {
		switch {
		case one.s.Elector().Holding():
			lead, standby = one, two
		case two.s.Elector().Holding():
			lead, standby = two, one
		}
		return lead != nil
	})
	if standby.writes.Load() != 0 {
		t.Error("the standby sharder wrote")
	}
	lead.cancel()
	if err := <-lead.done; err != nil {
		t.Fatal(err)
	}
	lead.done <- nil
	stopped := time.Now().UnixNano()
	createConfigMaps(t, ring.Namespace, "second", 20)
	waitSettled(t, ring, a)
	if last := lead.writes.Load(); last > stopped {
		t.Errorf("the old sharder wrote %v after its Run returned", time.Duration(last-stopped))
	}
	if standby.writes.Load() == 0 {
		t.Error("the new sharder wrote nothing")
	}
}
