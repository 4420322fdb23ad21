package dashboard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// timing are the options of a replica's elections: the default lease
// timings, which a loaded machine keeps renewing (the test waits for no
// expiry: a member that lost its Lease would take the drains back), and a
// quicker retry, so that a standby looks at the sharder's Lease soon.
func timing(identity string) []leader.Option {
	return []leader.Option{leader.WithIdentity(identity), leader.WithRetryPeriod(250 * time.Millisecond),
		leader.WithLogger(controlplanetest.QuietLogger())}
}

// replica is one replica of a sharded operator as the dashboard sees it:
// the ring's sharder and the replica's member. The member handles nothing
// (no factory runs in its term), so an object asked to drain from it
// stays draining until the test acknowledges it, as a member's gate would.
type replica struct {
	sharder *shard.Sharder
	member  *shard.Member
}

func startReplica(t *testing.T, kube kubernetes.Interface, ring shard.Ring, name string) *replica {
	t.Helper()
	cfg := controlPlane(t).Config()
	s, err := shard.NewSharder(cfg, ring, shard.SharderOptions{Namespace: ring.Namespace, Leader: timing("sharder-" + name),
		Logger: controlplanetest.QuietLogger(), RetryPeriod: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m, err := shard.NewMember(kube.CoordinationV1(), ring, timing("replica-"+name)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	go func() { done <- s.Run(ctx) }()
	go func() {
		done <- m.Run(ctx, func(ctx context.Context) error { <-ctx.Done(); return nil })
	}()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("replica %s: %v", name, err)
			}
		}
	})
	controlplanetest.Eventually(t, time.Minute, "replica "+name+"'s member to hold its Lease", m.Holding)
	return &replica{sharder: s, member: m}
}

func (r *replica) dashboard(t *testing.T, f *fixture) string {
	t.Helper()
	_, srv := f.dashboard(t, dashboard.Options{Shard: r.sharder, ShardMember: func() dashboard.ShardMember { return r.member }})
	return srv.URL
}

// assigned returns the ConfigMaps of ns by the member they are assigned
// to, and those asked to drain, as the API server has them.
func assigned(t *testing.T, kube kubernetes.Interface, ring shard.Ring) (map[string][]string, []string) {
	t.Helper()
	l, err := kube.CoreV1().ConfigMaps(ring.Namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	var draining []string
	for _, cm := range l.Items {
		key := cm.Namespace + "/" + cm.Name
		by[cm.Labels[shard.AssignmentLabel(ring.Name)]] = append(by[cm.Labels[shard.AssignmentLabel(ring.Name)]], key)
		if _, ok := cm.Labels[shard.DrainLabel(ring.Name)]; ok {
			draining = append(draining, key)
		}
	}
	slices.Sort(draining)
	return by, draining
}

// TestShardedReplicasInABrowser: two replicas of a sharded operator on the
// real API server, each with its dashboard. The dashboard of the replica
// whose sharder is elected shows, in a real browser, both members (its
// own marked), the objects each holds, and the drains in flight when the
// second member joins, each as the API server has them; once the drains
// are acknowledged, the members' shares, and no drain. The other replica's
// dashboard names its member and the elected sharder, and says where the
// shares are shown.
func TestShardedReplicasInABrowser(t *testing.T) {
	const objects = 12
	cfg := controlPlane(t).Config()
	kube := controlplanetest.Clientset(cfg)
	ring := shard.Ring{Name: "web", Namespace: controlplanetest.Namespace(t, cfg),
		Kinds: []shard.Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}
		if _, err := kube.CoreV1().ConfigMaps(ring.Namespace).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t)
	a := startReplica(t, kube, ring, "a")
	controlplanetest.Eventually(t, time.Minute, "every ConfigMap assigned to replica a", func() bool {
		by, _ := assigned(t, kube, ring)
		return len(by[a.member.ID()]) == objects
	})
	b := startReplica(t, kube, ring, "b")
	var draining []string
	controlplanetest.Eventually(t, time.Minute, "the ConfigMaps replica b wants asked to drain from a", func() bool {
		_, draining = assigned(t, kube, ring)
		want := 0
		for i := range objects {
			if shard.Pick(fmt.Sprintf("%s/cm-%02d", ring.Namespace, i), []string{a.member.ID(), b.member.ID()}) == b.member.ID() {
				want++
			}
		}
		return want > 0 && len(draining) == want
	})

	page := browsertest.Start(t)
	aURL := a.dashboard(t, f)
	if err := chromedp.Do(page, chromedp.Navigate(aURL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#tabs button[data-tab="replicas"]`))); err != nil {
		t.Fatal(err)
	}
	// The view refreshes every 2 s: wait for the drains the API server has.
	drains := browsertest.Wait[[]string](t, page, "the drains in flight", fmt.Sprintf(
		`(d => d.length === %d && d)([...document.querySelectorAll("#drains tr[data-drain]")].map((r) => r.dataset.drain).sort())`, len(draining)))
	if !slices.Equal(drains, draining) {
		t.Errorf("the page shows the drains %v, the API server %v", drains, draining)
	}
	rows := memberRows(t, page)
	if len(rows) != 2 || rows[a.member.ID()].objects != objects || rows[b.member.ID()].objects != 0 ||
		!rows[a.member.ID()].self || rows[b.member.ID()].self || rows[a.member.ID()].state != shard.MemberLive || rows[b.member.ID()].state != shard.MemberLive {
		t.Errorf("members while draining: %+v, want a (this replica) holding all %d and b none, both live", rows, objects)
	}
	if from := browsertest.Eval[[]string](t, page, `[...document.querySelectorAll("#drains tr[data-drain] td:nth-child(3)")].map((c) => c.textContent)`); slices.ContainsFunc(from, func(m string) bool { return m != a.member.ID() }) {
		t.Errorf("drains from %v, want all from a (%s)", from, a.member.ID())
	}
	browsertest.Screenshot(t, page, "dashboard-shards")

	// Acknowledge as a's gate would: both labels go and the trail records
	// a's release, on the version read.
	for _, key := range draining {
		_, name, _ := strings.Cut(key, "/")
		cm, err := kube.CoreV1().ConfigMaps(ring.Namespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"labels":{%q:null,%q:null},"annotations":{%q:%q}}}`, cm.ResourceVersion,
			shard.AssignmentLabel(ring.Name), shard.DrainLabel(ring.Name), shard.TrailAnnotation(ring.Name), "released:"+a.member.ID()+"@"+cm.ResourceVersion)
		if _, err := kube.CoreV1().ConfigMaps(ring.Namespace).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var by map[string][]string
	controlplanetest.Eventually(t, time.Minute, "the drained ConfigMaps assigned to b", func() bool {
		by, draining = assigned(t, kube, ring)
		return len(draining) == 0 && len(by[b.member.ID()]) == len(drains) && len(by[a.member.ID()]) == objects-len(drains)
	})
	browsertest.Wait[bool](t, page, "the shares after the handover", fmt.Sprintf(
		`document.querySelectorAll("#drains").length === 0 && [...document.querySelectorAll("#members tr[data-member]")].map((r) => r.dataset.member + "=" + r.querySelector(".objects").textContent).sort().join(" ") === %q`,
		strings.Join(slices.Sorted(slices.Values([]string{fmt.Sprintf("%s=%d", a.member.ID(), len(by[a.member.ID()])), fmt.Sprintf("%s=%d", b.member.ID(), len(by[b.member.ID()]))})), " ")))
	// b's objects are listed under it, by name.
	keys := browsertest.Eval[[]string](t, page, fmt.Sprintf(`[...document.querySelectorAll('#members tr[data-member=%q] ul.keys li')].map((l) => l.textContent.replace("ConfigMap ", ""))`, b.member.ID()))
	if want := slices.Sorted(slices.Values(by[b.member.ID()])); !slices.Equal(keys, want) {
		t.Errorf("b's objects listed as %v, the API server has %v", keys, want)
	}

	// The same over the API, with the shares as fractions.
	var r dashboard.Replicas
	get(t, aURL+"/ui/api/replicas", &r)
	sum := 0.0
	for _, m := range r.Members {
		sum += m.Share
	}
	if r.Mode != "sharded" || !r.Sharding || !r.Synced || r.MemberID != a.member.ID() || !r.Holding || r.Leader != "sharder-a" ||
		r.Ring != "web" || len(r.Members) != 2 || sum < 0.999 || sum > 1.001 || len(r.Drains) != 0 || r.Unassigned != 0 {
		t.Errorf("a's api/replicas: %+v", r)
	}

	// Between two terms (shard.Join builds a member per term) a replica
	// has no member: its view says so, and still shows the ring.
	_, between := f.dashboard(t, dashboard.Options{Shard: a.sharder, ShardMember: func() dashboard.ShardMember { return (*shard.Member)(nil) }})
	var rb dashboard.Replicas
	get(t, between.URL+"/ui/api/replicas", &rb)
	if rb.MemberID != "" || rb.Identity != "" || rb.Holding || !rb.Sharding || len(rb.Members) != 2 || slices.ContainsFunc(rb.Members, func(m dashboard.Member) bool { return m.Self }) {
		t.Errorf("api/replicas between terms: %+v, want no member of this replica's, the ring's two", rb)
	}

	// b's dashboard: its member, the elected sharder, and where the shares are.
	if err := chromedp.Do(page, chromedp.Navigate(b.dashboard(t, f)+"/ui/")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#tabs button[data-tab="replicas"]`))); err != nil {
		t.Fatal(err)
	}
	// b's sharder names the elected one once it has read the Lease; the
	// view refreshes every 2 s.
	text := browsertest.Wait[string](t, page, "b's replicas view naming the elected sharder",
		`document.querySelector("#member") && document.querySelector("#leader").textContent === "sharder-a" && document.querySelector("#replicas").textContent`)
	for _, want := range []string{b.member.ID(), "sharder-a", "Only the elected sharder"} {
		if !strings.Contains(text, want) {
			t.Errorf("b's replicas view does not say %q: %q", want, text)
		}
	}
	if n := browsertest.Eval[int](t, page, `document.querySelectorAll("#members").length`); n != 0 {
		t.Errorf("b's view, whose sharder stands by, shows a members table")
	}
}

type memberRow struct {
	objects int
	state   string
	self    bool
}

// memberRows reads the members table of the page.
func memberRows(t *testing.T, page context.Context) map[string]memberRow {
	t.Helper()
	raw := browsertest.Eval[[][]string](t, page, `[...document.querySelectorAll("#members tr[data-member]")].map((r) =>
		[r.dataset.member, r.querySelector(".objects").textContent, r.querySelector(".state").textContent, String(r.classList.contains("self"))])`)
	out := map[string]memberRow{}
	for _, r := range raw {
		var n int
		fmt.Sscanf(r[1], "%d", &n)
		out[r[0]] = memberRow{objects: n, state: r[2], self: r[3] == "true"}
	}
	return out
}
