package shard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// rbacManifest is the RBAC that docs/replicas.md quotes.
const rbacManifest = "testdata/rbac.yaml"

// applyRBAC creates the objects of rbacManifest in ns, after edit (if not
// nil) changed its Roles, and returns the Roles as created.
func applyRBAC(t *testing.T, ns string, edit func(*rbacv1.Role)) map[string]*rbacv1.Role {
	t.Helper()
	data, err := os.ReadFile(rbacManifest)
	if err != nil {
		t.Fatal(err)
	}
	cs := controlplanetest.Clientset(cp().Config())
	roles := map[string]*rbacv1.Role{}
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", rbacManifest, err)
		}
		switch o := obj.(type) {
		case *rbacv1.Role:
			if edit != nil {
				edit(o)
			}
			r, err := cs.RbacV1().Roles(ns).Create(t.Context(), o, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			roles[r.Name] = r
		case *rbacv1.RoleBinding:
			if _, err := cs.RbacV1().RoleBindings(ns).Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: unexpected %T", rbacManifest, obj)
		}
	}
	return roles
}

// audit records what one identity asked of the API server in its
// namespace: the verbs per resource it was allowed, and the requests it
// was refused.
type audit struct {
	mu        sync.Mutex
	used      map[string]map[string]bool // resource -> verb
	forbidden []string
}

// as returns a config that impersonates the service account name of ns,
// recording its requests in a.
func (a *audit) as(ns, name string) *rest.Config {
	a.used = map[string]map[string]bool{}
	c := rest.CopyConfig(cp().Config())
	c.QPS = -1
	c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + name}
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(r)
			if err != nil {
				return resp, err
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			if resp.StatusCode == http.StatusForbidden {
				a.forbidden = append(a.forbidden, r.Method+" "+r.URL.String())
				return resp, err
			}
			if res, verb, ok := requestVerb(ns, r.Method, r.URL); ok {
				if a.used[res] == nil {
					a.used[res] = map[string]bool{}
				}
				a.used[res][verb] = true
				// client-go's informers list by a watch that sends
				// the initial objects first (WatchListClient); an
				// informer falls back to a list where that is off.
				if verb == "watch" && r.URL.Query().Get("sendInitialEvents") == "true" {
					a.used[res]["list"] = true
				}
			}
			return resp, err
		})
	})
	return c
}

// requestVerb returns the resource and RBAC verb of a request in ns (not
// ok for requests outside it, such as discovery).
func requestVerb(ns, method string, u *url.URL) (resource, verb string, ok bool) {
	_, rest, ok := strings.Cut(u.Path, "/namespaces/"+ns+"/")
	if !ok {
		return "", "", false
	}
	resource, name, _ := strings.Cut(rest, "/")
	switch method {
	case http.MethodGet:
		switch {
		case u.Query().Get("watch") == "true":
			verb = "watch"
		case name == "":
			verb = "list"
		default:
			verb = "get"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	}
	return resource, verb, true
}

// granted returns the Role's verbs by resource.
func granted(r *rbacv1.Role) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, rule := range r.Rules {
		for _, res := range rule.Resources {
			if out[res] == nil {
				out[res] = map[string]bool{}
			}
			for _, v := range rule.Verbs {
				out[res][v] = true
			}
		}
	}
	return out
}

// rbacMember is a replica's membership (shard.Join) as a restricted
// identity, with a factory for the ring's ConfigMaps in ns whose handler
// records what it handled, under which member ID.
type rbacMember struct {
	log    *logtest.Hook
	mu     sync.Mutex
	id     string
	called map[string]string // key -> member ID of the last call
	gone   map[string]bool   // keys whose deletion the handler was given
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

func joinAs(t *testing.T, cfg *rest.Config, ring shard.Ring, name string) *rbacMember {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	r := &rbacMember{log: logtest.NewLocal(log), called: map[string]string{}, gone: map[string]bool{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	go func() {
		r.done <- shard.Join(ctx, kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), ring, func(ctx context.Context, m *shard.Member) error {
			f, err := generic.NewFactoryFromConfig(m.Fence(cfg), nil, m.FactoryOptions(cfg, &generic.FactoryOptions{
				Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ring.Namespace}},
				Controller: controller.SharedControllerFactoryOptions{Logger: log, Backoff: controller.Backoff{Base: 10 * time.Millisecond, Max: 200 * time.Millisecond}},
			}))
			if err != nil {
				return err
			}
			cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			id := m.ID()
			cms.OnChange(ctx, "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				r.mu.Lock()
				r.called[key] = id
				if cm == nil {
					r.gone[key] = true
				}
				r.mu.Unlock()
				return cm, nil
			})
			r.mu.Lock()
			r.id = id
			r.mu.Unlock()
			return f.Run(ctx, 2)
		}, leader.WithIdentity(name), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
			leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	}()
	t.Cleanup(func() { r.stop(t) })
	eventually(t, name+" joined", func() bool { return r.ID() != "" })
	return r
}

// ID returns the ID of the member's term ("" before it began).
func (r *rbacMember) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id
}

// stop ends the membership (once) and checks Join's result.
func (r *rbacMember) stop(t *testing.T) {
	r.once.Do(func() {
		r.cancel()
		if err := <-r.done; err != nil {
			t.Errorf("Join: %v", err)
		}
	})
}

// runSharderAs runs the ring's sharder with cfg until the test ends.
func runSharderAs(t *testing.T, cfg *rest.Config, ring shard.Ring) *logtest.Hook {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	hook := logtest.NewLocal(log)
	s, err := shard.NewSharder(cfg, ring, shard.SharderOptions{
		Leader: []leader.Option{leader.WithIdentity("sharder"), leader.WithLeaseDuration(leaseDuration),
			leader.WithRenewDeadline(renewDeadline), leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger())},
		Logger: log, Namespace: ring.Namespace, RetryPeriod: retryPeriod, DrainTimeout: time.Second,
		LeaseRetention: leaseDuration, // the crashed member's Lease is collected within the test
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sharder Run: %v", err)
		}
	})
	return hook
}

// assignments returns the ring's assignment of every ConfigMap of ns by
// key, and which of them are draining.
func assignments(t *testing.T, ns string) (map[string]string, map[string]bool) {
	t.Helper()
	l, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, draining := map[string]string{}, map[string]bool{}
	for _, cm := range l.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		key := ns + "/" + cm.Name
		out[key] = cm.Labels[shard.AssignmentLabel(ringName)]
		if _, ok := cm.Labels[shard.DrainLabel(ringName)]; ok {
			draining[key] = true
		}
	}
	return out, draining
}

// TestRBACIsEnough runs a sharder and two members each as a service
// account with only its Role of testdata/rbac.yaml (the RBAC
// docs/replicas.md quotes): every object is assigned and handled by its
// member, through a join (drains acknowledged), a dead member's Lease
// collected and the members' clean exits; nothing is refused, and every
// verb the Roles grant was used.
func TestRBACIsEnough(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	roles := applyRBAC(t, ns, nil)
	ring := testRing(ns)
	for i := range 40 {
		createCM(t, ns, fmt.Sprintf("cm-%d", i), "")
	}
	var sharderAudit, aAudit, bAudit audit
	runSharderAs(t, sharderAudit.as(ns, "shard-sharder"), ring)
	a := joinAs(t, aAudit.as(ns, "shard-member"), ring, "a")
	handled := func(ms ...*rbacMember) bool {
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.ID())
		}
		got, draining := assignments(t, ns)
		for key, id := range got {
			if draining[key] || id != shard.Pick(key, ids) {
				return false
			}
			m := ms[slices.Index(ids, id)]
			m.mu.Lock()
			by := m.called[key]
			m.mu.Unlock()
			if by != id {
				return false
			}
		}
		return true
	}
	eventually(t, "every ConfigMap assigned to a and handled by it", func() bool { return handled(a) })
	b := joinAs(t, bAudit.as(ns, "shard-member"), ring, "b")
	eventually(t, "every ConfigMap assigned to a or b and handled there", func() bool { return handled(a, b) })

	// A member that crashed: its Lease stays until the sharder collects it.
	leases := controlplanetest.Clientset(cp().Config()).CoordinationV1().Leases(ns)
	crashed := shard.MemberLeaseName(ringName, shard.MemberID("crashed"))
	holder, dur, now := "crashed", int32(leaseDuration/time.Second), metav1.NowMicro()
	if _, err := leases.Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: crashed, Labels: map[string]string{shard.RingLabel: ringName}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the crashed member's Lease collected", func() bool {
		_, err := leases.Get(t.Context(), crashed, metav1.GetOptions{})
		return err != nil
	})
	b.stop(t)
	eventually(t, "every ConfigMap back on a and handled there", func() bool { return handled(a) })
	// A deletion of a held object: the member's gate confirms it with a
	// read (get), which nothing else above needs of it.
	if err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "cm-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a told that cm-0 is gone", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.gone[ns+"/cm-0"]
	})
	a.stop(t)

	check := func(who string, a *audit, role *rbacv1.Role) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.forbidden) > 0 {
			t.Errorf("%s was refused: %v", who, a.forbidden)
		}
		want := granted(role)
		for res, verbs := range a.used {
			for v := range verbs {
				if !want[res][v] {
					t.Errorf("%s used %s %s, which Role %s does not grant", who, v, res, role.Name)
				}
			}
		}
		for res, verbs := range want {
			for v := range verbs {
				if !a.used[res][v] {
					t.Errorf("Role %s grants %s %s, which %s never used", role.Name, v, res, who)
				}
			}
		}
	}
	// The sharder reads an object again only after a conflicting patch,
	// which this test does not provoke.
	sharderAudit.mu.Lock()
	if sharderAudit.used["configmaps"] != nil {
		sharderAudit.used["configmaps"]["get"] = true
	}
	sharderAudit.mu.Unlock()
	check("the sharder", &sharderAudit, roles["shard-sharder"])
	merged := audit{used: map[string]map[string]bool{}}
	for _, m := range []*audit{&aAudit, &bAudit} {
		merged.forbidden = append(merged.forbidden, m.forbidden...)
		for res, verbs := range m.used {
			if merged.used[res] == nil {
				merged.used[res] = map[string]bool{}
			}
			for v := range verbs {
				merged.used[res][v] = true
			}
		}
	}
	check("the members", &merged, roles["shard-member"])
}

// TestRBACWithoutPatchFailsVisibly: a member whose Role lacks patch on the
// sharded kind cannot acknowledge a drain; the refusal is logged, naming
// the verb and the resource, and the object stays with the member, draining
// (never handed on while the member might still act on it).
func TestRBACWithoutPatchFailsVisibly(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	applyRBAC(t, ns, func(r *rbacv1.Role) {
		if r.Name != "shard-member" {
			return
		}
		for i, rule := range r.Rules {
			if slices.Contains(rule.Resources, "configmaps") {
				r.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "patch" })
			}
		}
	})
	ring := testRing(ns)
	for i := range 20 {
		createCM(t, ns, fmt.Sprintf("cm-%d", i), "")
	}
	var sharderAudit, aAudit, bAudit audit
	runSharderAs(t, sharderAudit.as(ns, "shard-sharder"), ring)
	a := joinAs(t, aAudit.as(ns, "shard-member"), ring, "a")
	eventually(t, "every ConfigMap assigned to a", func() bool {
		got, _ := assignments(t, ns)
		for _, id := range got {
			if id != a.ID() {
				return false
			}
		}
		return true
	})
	joinAs(t, bAudit.as(ns, "shard-member"), ring, "b")
	// The API server's own message, naming who may not do what.
	want := `cannot patch resource "configmaps"`
	eventually(t, "a's refused acknowledgement logged", func() bool {
		for _, e := range a.log.AllEntries() {
			if err, ok := e.Data[logrus.ErrorKey].(error); ok && strings.Contains(err.Error(), want) || strings.Contains(e.Message, want) {
				t.Logf("logged: %s %v", e.Message, e.Data[logrus.ErrorKey])
				return true
			}
		}
		return false
	})
	aAudit.mu.Lock()
	refused := slices.ContainsFunc(aAudit.forbidden, func(r string) bool { return strings.HasPrefix(r, http.MethodPatch+" ") })
	aAudit.mu.Unlock()
	if !refused {
		t.Error("no PATCH of a was refused with 403")
	}
	got, draining := assignments(t, ns)
	if len(draining) == 0 {
		t.Error("no object is draining")
	}
	for key, id := range got {
		if id != a.ID() {
			t.Errorf("%s moved to %s although a could not acknowledge", key, id)
		}
	}
}
