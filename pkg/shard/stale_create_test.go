package shard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// childMember is a ring member whose connections all go through one proxy
// and whose handler keeps a child ConfigMap "NAME-child" for each
// ConfigMap it handles: it creates the child, through its fenced config,
// while the owner's data says want=yes, and deletes it otherwise. Once
// armed, its creates are held in the network under the fence (held).
type childMember struct {
	proxy *controlplanetest.Proxy
	cfg   *rest.Config // through the proxy, unfenced
	held  *heldCreates // the network under the fence, for creates of ConfigMaps

	mu        sync.Mutex
	id        string
	seen      map[string]string // owner name -> the want its handler last saw, with the term's ID
	createErr []error
}

func (c *childMember) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

func (c *childMember) lastSeen(owner string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[owner]
}

func (c *childMember) creates() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.createErr...)
}

func startChildMember(t *testing.T, ring shard.Ring, name string) *childMember {
	t.Helper()
	c := &childMember{seen: map[string]string{}, held: &heldCreates{}}
	proxy, cfg := controlplanetest.NewProxy(t, cp().Config())
	c.proxy, c.cfg = proxy, cfg
	network := rest.CopyConfig(cfg)
	network.Wrap(func(rt http.RoundTripper) http.RoundTripper { c.held.next = rt; return c.held })
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.Timeout = renewDeadline
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = shard.Join(ctx, kubernetes.NewForConfigOrDie(leaseCfg).CoordinationV1(), ring, func(ctx context.Context, m *shard.Member) error {
			fenced := m.Fence(network)
			f, err := generic.NewFactoryFromConfig(fenced, nil, m.FactoryOptions(cfg, &generic.FactoryOptions{
				Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ring.Namespace}, SyncTimeout: time.Minute},
				Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
			}))
			if err != nil {
				return err
			}
			cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			children := kubernetes.NewForConfigOrDie(fenced).CoreV1().ConfigMaps(ring.Namespace)
			cms.OnChange(ctx, "child", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				if cm == nil || cm.Labels[shard.AssignmentLabel(ringName)] == "" {
					return nil, nil // a child (outside the ring's share) or gone
				}
				c.mu.Lock()
				c.seen[cm.Name] = cm.Data["want"] + "@" + m.ID()
				c.mu.Unlock()
				child := cm.Name + "-child"
				if cm.Data["want"] != "yes" {
					err := children.Delete(context.Background(), child, metav1.DeleteOptions{})
					if apierrors.IsNotFound(err) {
						return nil, nil
					}
					return nil, err
				}
				_, err := children.Create(context.Background(), &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: child},
					Data:       map[string]string{"by": name + "/" + m.ID()},
				}, metav1.CreateOptions{})
				c.mu.Lock()
				c.createErr = append(c.createErr, err)
				c.mu.Unlock()
				if apierrors.IsAlreadyExists(err) {
					return nil, nil
				}
				return nil, err
			})
			c.mu.Lock()
			c.id = m.ID()
			c.mu.Unlock()
			return f.Run(ctx, 2)
		}, leader.WithIdentity(name), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
			leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	}()
	t.Cleanup(func() {
		proxy.Resume()
		cancel()
		<-done
	})
	eventually(t, name+"'s first term", func() bool { return c.ID() != "" })
	return c
}

// heldCreates is the network under a member's fence: once armed, the
// creates of ConfigMaps (POSTs to the collection) it is given, as the
// fence sent them (stamped), are kept and the client gets an error, as on
// a connection cut mid-request; deliver sends them to the API server
// later, as a connection that resumes does. Every other request goes
// through.
type heldCreates struct {
	next  http.RoundTripper
	armed atomic.Bool
	mu    sync.Mutex
	held  []*http.Request
}

func (h *heldCreates) RoundTrip(req *http.Request) (*http.Response, error) {
	if !h.armed.Load() || req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/configmaps") {
		return h.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	r := req.Clone(context.Background())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	h.mu.Lock()
	h.held = append(h.held, r)
	h.mu.Unlock()
	return nil, errors.New("connection stalled (the create is held, and delivered later)")
}

func (h *heldCreates) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}

// deliver sends the held creates to the API server now (not through the
// member's proxy, which may be stalled) and returns each answer's status
// code and body.
func (h *heldCreates) deliver(t *testing.T) (codes []int, bodies []string) {
	t.Helper()
	h.armed.Store(false)
	rt, err := rest.TransportFor(rest.CopyConfig(cp().Config()))
	if err != nil {
		t.Fatal(err)
	}
	server, err := url.Parse(cp().Config().Host)
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	held := h.held
	h.held = nil
	h.mu.Unlock()
	for _, r := range held {
		r = r.Clone(t.Context())
		r.URL.Scheme, r.URL.Host, r.Host = server.Scheme, server.Host, "" // around the member's proxy
		resp, err := rt.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		codes, bodies = append(codes, resp.StatusCode), append(bodies, string(b))
	}
	return codes, bodies
}

// memberTermID returns the term ID in the Lease of member id.
func memberTermID(t *testing.T, ns, id string) string {
	t.Helper()
	l, err := controlplanetest.Clientset(cp().Config()).CoordinationV1().Leases(ns).Get(t.Context(), shard.MemberLeaseName(ringName, id), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Labels[leader.TermIDLabel]
}

// dryRunMemberCreate sends a dry-run create stamped as member creates of
// the ring are, with term termID.
func dryRunMemberCreate(ctx context.Context, ns, termID string) error {
	_, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "probe-",
		Labels: map[string]string{leader.TermLeaseLabel: leader.TermGroupLabelValue(ns, shard.TermGroup(ringName)),
			leader.TermIDLabel: termID},
	}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// TestStalledMemberCreateNeverLandsAfterTheMove (issue 24): a member's
// create of a child, sent in its term, is held in the network; the owner
// then stops wanting the child, the member's connection stalls (its Lease
// expires), and the sharder moves the owner to the other member, which
// handles it (no child). When the held create reaches the API server, it
// must be refused: it carries the member's term stamp, and the ring's term
// group binding (shard.InstallTermPolicy) judges it by the member's Lease,
// which the sharder ended before it moved the owner. A live member's
// creates pass (before the hold, and after the move, on the owner's new
// member), and the test's own creates, which carry no stamp, pass the
// policy.
func TestStalledMemberCreateNeverLandsAfterTheMove(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	ring := testRing(ns)
	kube := controlplanetest.Clientset(cp().Config())
	if err := shard.InstallTermPolicy(t.Context(), kube.AdmissionregistrationV1(), ring); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err) // unstamped: the policy never judges it
		}
	}
	a := startChildMember(t, ring, "a")
	b := startChildMember(t, ring, "b")
	runTestSharder(t, ring)
	target := settledOnIDs(t, ns, a.ID, b.ID)
	stalled := a.ID()
	aTerm := memberTermID(t, ns, stalled)
	patchWant := func(want string) {
		t.Helper()
		if _, err := kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), target, types.MergePatchType, []byte(`{"data":{"want":"`+want+`"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	childExists := func() bool {
		_, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), target+"-child", metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	// A live member's create passes.
	patchWant("yes")
	eventually(t, "a creating the child", childExists)
	patchWant("no")
	eventually(t, "a deleting the child", func() bool { return a.lastSeen(target) == "no@"+stalled && !childExists() })

	a.held.armed.Store(true)
	patchWant("yes")
	eventually(t, "a's create held in the network", func() bool { return a.held.count() > 0 })
	a.proxy.Stall() // a's Lease is renewed no more
	patchWant("no")
	eventually(t, "b handling the owner that wants no child", func() bool { return b.lastSeen(target) == "no@"+b.ID() })
	// The guarantee rests on the API server's admission seeing a's term
	// ended (it reads the member Leases from an informer of its own):
	// wait for that before the held creates are let go.
	eventually(t, "the API server refusing a's term", func() bool { return leader.IsTermRefused(dryRunMemberCreate(t.Context(), ns, aTerm)) })
	codes, bodies := a.held.deliver(t)
	for i, code := range codes {
		if code < 300 || !strings.Contains(bodies[i], "ValidatingAdmissionPolicy '"+leader.TermPolicyName+"'") {
			t.Errorf("a's create held since its term (member %s), delivered after b handled the owner (want=no): %d %s; want refused by the term policy",
				stalled, code, printable(bodies[i]))
		}
	}
	if childExists() {
		t.Errorf("a's create, sent in its term (member %s) and held, landed after b handled the owner (want=no)", stalled)
	}
	for i := range codes {
		t.Logf("a's held create, delivered: %d %s", codes[i], printable(bodies[i]))
	}

	// A live member's create passes after the move: the owner wants the
	// child again, and its holder now (b, or a's next term) creates it.
	a.proxy.Resume()
	patchWant("yes")
	eventually(t, "the owner's holder creating the child", childExists)

	// a's ended Lease is kept (for SharderOptions.LeaseRetention, an hour
	// by default), so that the creates of its term stay refused.
	l, err := kube.CoordinationV1().Leases(ns).Get(t.Context(), shard.MemberLeaseName(ringName, stalled), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("a's ended Lease: %v; want it kept for the retention", err)
	}
	if l.Labels[leader.TermEndedLabel] != aTerm && (l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "") {
		t.Errorf("a's Lease, labelled %v, held by %v: want it ended (%s=%s) or released", l.Labels, *l.Spec.HolderIdentity, leader.TermEndedLabel, aTerm)
	}
}

// settledOnIDs waits until every ConfigMap of ns is on the member Pick
// chooses among the two IDs, with no drain pending, and returns one of
// the first's.
func settledOnIDs(t *testing.T, ns string, a, b func() string) string {
	t.Helper()
	kube := controlplanetest.Clientset(cp().Config())
	var target string
	eventually(t, "the ring settled", func() bool {
		l, err := kube.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		target = ""
		for _, cm := range l.Items {
			id := cm.Labels[shard.AssignmentLabel(ringName)]
			if id != shard.Pick(ns+"/"+cm.Name, []string{a(), b()}) || cm.Labels[shard.DrainLabel(ringName)] != "" {
				return false
			}
			if id == a() {
				target = cm.Name
			}
		}
		return target != ""
	})
	return target
}

// printable is what can be read of an answer's body (Lariat's clients
// send and receive built-in kinds as protobuf).
func printable(body string) string {
	var b strings.Builder
	for _, r := range body {
		if r >= ' ' && r < 0x7f {
			b.WriteRune(r)
		}
	}
	return b.String()
}
