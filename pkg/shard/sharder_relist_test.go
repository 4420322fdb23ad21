package shard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestSharderRelistActsOnNoPartialView: the sharder is cut off from the API
// server (a proxy) long enough for etcd to compact past what its informers
// last saw, while members change (one leaves, one joins) and objects are
// created and deleted. When it comes back, the resourceVersions its
// informers hold are compacted (a watch from them is refused as too old,
// 410 Gone), so they list again, in the same term. Every write it makes
// from then on must agree with the members as they are (a and c): an
// object assigned to a instead of c, or drained off a though a is its
// member, would be a decision taken on a view that was missing a member
// or objects. It passed before the lease view waited for the whole list
// to be in its store too: the window between a list's return and the
// store holding it is short; TestSharderWaitsForTheWholeLeaseRelist holds
// it open.
func TestSharderRelistActsOnNoPartialView(t *testing.T) {
	own := controlplanetest.Start(t, controlplane.Options{APIServerFlags: []string{
		"--watch-cache=false",
		"--etcd-compaction-interval=1s",
	}})
	cfg := rest.CopyConfig(own.Config())
	cfg.QPS = -1
	kube := controlplanetest.Clientset(cfg)
	ring := Ring{Name: "ring", Namespace: controlplanetest.Namespace(t, cfg), Kinds: []Kind{configMaps}}
	createConfigMapsOn(t, kube, ring.Namespace, "cm", 40)
	a, b := startMemberOn(t, kube, ring, "a", 0), startMemberOn(t, kube, ring, "b", 0)

	proxy, proxied := controlplanetest.NewProxy(t, cfg)
	var rec requestLog
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	// The election outlives the cut, so that the informers relist in the
	// same term instead of a new term building new ones.
	o.Leader = append(o.Leader, leader.WithLeaseDuration(time.Minute), leader.WithRenewDeadline(50*time.Second))
	s := newSharder(t, rec.wrap(proxied), ring, o)
	runSharder(t, s)
	before := waitSettledOn(t, kube, ring, a.id, b.id)
	s.mu.Lock()
	term := s.cur
	s.mu.Unlock()
	listed, err := kube.CoreV1().ConfigMaps(ring.Namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	proxy.Cut()
	eventually(t, "the sharder to see its lease view broken", func() bool {
		v := s.view()
		return v != nil && !v.valid
	})
	b.release(t)
	c := startMemberOn(t, kube, ring, "c", 0)
	createConfigMapsOn(t, kube, ring.Namespace, "late", 40)
	for i := range 5 {
		if err := kube.CoreV1().ConfigMaps(ring.Namespace).Delete(t.Context(), fmt.Sprintf("cm-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitCompactedOn(t, kube, ring.Namespace, listed.ResourceVersion)
	mark := rec.len()
	proxy.Restore()

	waitSettledOn(t, kube, ring, a.id, c.id)
	s.mu.Lock()
	same := s.cur == term
	s.mu.Unlock()
	if !same {
		t.Fatal("the sharder's term ended during the cut: its informers were built anew, not relisted")
	}
	reqs := rec.since(mark)
	var relistedObjects, relistedLeases bool
	for _, r := range reqs {
		if r.method == http.MethodGet && r.list {
			relistedObjects = relistedObjects || strings.HasSuffix(r.path, "/configmaps")
			relistedLeases = relistedLeases || strings.HasSuffix(r.path, "/leases")
		}
	}
	if !relistedObjects || !relistedLeases {
		t.Fatalf("no relist after the cut (configmaps %v, leases %v): the test did not make the watches too old", relistedObjects, relistedLeases)
	}
	checkWritesAgree(t, ring, reqs, before, a.id, c.id)
}

// checkWritesAgree fails t if a ConfigMap patch in reqs the API server
// accepted disagrees with members being the live ones: an assignment to
// another member than Pick's, or a drain off a member that is the object's
// wanted one (before: the objects' members when members changed).
func checkWritesAgree(t *testing.T, ring Ring, reqs []request, before map[string]state, members ...string) {
	t.Helper()
	assign, drain := AssignmentLabel(ring.Name), DrainLabel(ring.Name)
	writes := 0
	for _, r := range reqs {
		if r.method != http.MethodPatch || r.status >= 300 || !strings.Contains(r.path, "/configmaps/") {
			continue
		}
		writes++
		name := r.path[strings.LastIndex(r.path, "/")+1:]
		want := Pick(ring.Namespace+"/"+name, members)
		var p struct {
			Metadata struct {
				Labels map[string]*string `json:"labels"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatalf("patch of %s: %v", name, err)
		}
		if to, ok := p.Metadata.Labels[assign]; ok && to != nil && *to != want {
			t.Errorf("the sharder assigned ConfigMap %s to %s; the live members are %v and it belongs to %s", name, *to, members, want)
		}
		if d, ok := p.Metadata.Labels[drain]; ok && d != nil && before[name].member == want {
			t.Errorf("the sharder drained ConfigMap %s off %s, which is still its member", name, want)
		}
	}
	if writes == 0 {
		t.Fatal("the sharder wrote nothing after the members changed: the test exercised nothing")
	}
}

// request is one request the sharder sent.
type request struct {
	method, path string
	list         bool // a GET that is a list, or a watch that starts with one
	body         []byte
	status       int
}

// requestLog records the requests sent through a config, with their bodies
// and the API server's status.
type requestLog struct {
	mu   sync.Mutex
	reqs []request
}

func (l *requestLog) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			r := request{method: req.Method, path: req.URL.Path,
				list: req.Method == http.MethodGet &&
					(req.URL.Query().Get("watch") != "true" || req.URL.Query().Get("sendInitialEvents") == "true")}
			if req.Body != nil && req.GetBody != nil {
				if b, err := req.GetBody(); err == nil {
					r.body, _ = io.ReadAll(b)
				}
			} else if req.Body != nil {
				r.body, _ = io.ReadAll(req.Body)
				req.Body = io.NopCloser(bytes.NewReader(r.body))
			}
			resp, err := next.RoundTrip(req)
			if err == nil {
				r.status = resp.StatusCode
			}
			l.mu.Lock()
			l.reqs = append(l.reqs, r)
			l.mu.Unlock()
			return resp, err
		})
	})
	return c
}

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

func (l *requestLog) since(i int) []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]request(nil), l.reqs[i:]...)
}

func createConfigMapsOn(t *testing.T, kube kubernetes.Interface, ns, prefix string, n int) {
	t.Helper()
	cms := kube.CoreV1().ConfigMaps(ns)
	for i := range n {
		if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitSettledOn waits until every ConfigMap of the ring's namespace is
// assigned as Pick says over ids, with no drain label, and returns the
// states. It acknowledges drains the way the members would.
func waitSettledOn(t *testing.T, kube kubernetes.Interface, ring Ring, ids ...string) map[string]state {
	t.Helper()
	var st map[string]state
	eventually(t, "every ConfigMap assigned to its wanted member", func() bool {
		l, err := kube.CoreV1().ConfigMaps(ring.Namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st = map[string]state{}
		for _, cm := range l.Items {
			if cm.Name == "kube-root-ca.crt" {
				continue
			}
			_, d := cm.Labels[DrainLabel(ring.Name)]
			s := state{member: cm.Labels[AssignmentLabel(ring.Name)], draining: d}
			if d {
				patch, err := ackPatch(ring.Name, s.member, cm.ResourceVersion)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = kube.CoreV1().ConfigMaps(ring.Namespace).Patch(t.Context(), cm.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			}
			if s.draining || s.member != Pick(ring.Namespace+"/"+cm.Name, ids) {
				return false
			}
			st[cm.Name] = s
		}
		return true
	})
	return st
}

// waitCompactedOn waits until a watch of ns's ConfigMaps from
// resourceVersion is refused as too old (etcd's revisions are shared by
// every kind, so the sharder's Lease watches are too).
func waitCompactedOn(t *testing.T, kube kubernetes.Interface, ns, resourceVersion string) {
	t.Helper()
	cms := kube.CoreV1().ConfigMaps(ns)
	controlplanetest.Eventually(t, time.Minute, "resourceVersion "+resourceVersion+" compacted", func() bool {
		w, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: resourceVersion})
		if err == nil {
			select {
			case e := <-w.ResultChan():
				if e.Type == watch.Error {
					err = apierrors.FromObject(e.Object)
				}
			case <-time.After(200 * time.Millisecond):
			}
			w.Stop()
		}
		var status apierrors.APIStatus
		if err != nil && !errors.As(err, &status) {
			t.Fatalf("watch: %v", err)
		}
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
	})
}
