package shard_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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

// ringReplica is one whole replica of a sharded operator: a ring member
// (shard.Join) whose factory, built for each term, handles its share of
// ConfigMaps (each handler call writes the replica's name on the
// ConfigMap, so handling takes a request's time), and a sharder candidate.
type ringReplica struct {
	name   string
	cur    atomic.Pointer[ringTerm]
	terms  atomic.Int32
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// ringTerm is what a replica builds for one term of its membership.
type ringTerm struct {
	m   *shard.Member
	cms *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList]
}

func startRingReplica(t *testing.T, ring shard.Ring, name string, rec *spans) *ringReplica {
	t.Helper()
	// Longer than the package's: under this test's load on a shared
	// machine a renewal can take over a second, and every lost membership
	// is a new term whose objects all move (the test allows it, but its
	// counts of moves would not hold).
	timing := []leader.Option{leader.WithLeaseDuration(3 * leaseDuration), leader.WithRenewDeadline(3 * renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger())}
	cfg := rest.CopyConfig(cp().Config())
	cfg.QPS, cfg.Burst = 500, 1000
	r := &ringReplica{name: name}
	term := func(ctx context.Context, m *shard.Member) error {
		f, err := generic.NewFactoryFromConfig(m.Fence(cfg), nil, m.FactoryOptions(cfg, &generic.FactoryOptions{
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
		cms.OnChange(ctx, "mark", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			sp := span{replica: name, id: m.ID(), start: time.Now()}
			if cm != nil {
				sp.round = cm.Data["round"]
			}
			defer func() { sp.end = time.Now(); rec.add(key, sp) }()
			// Handling takes a while, so that a move while it runs, were
			// it not drained first, would show as an overlap.
			time.Sleep(handleTime)
			if cm == nil || cm.Annotations[handledBy] == name {
				return cm, nil
			}
			cm = cm.DeepCopy()
			if cm.Annotations == nil {
				cm.Annotations = map[string]string{}
			}
			cm.Annotations[handledBy] = name
			return cms.Update(t.Context(), cm)
		})
		r.cur.Store(&ringTerm{m: m, cms: cms})
		r.terms.Add(1)
		return f.Run(ctx, 4)
	}
	s, err := shard.NewSharder(cfg, ring, shard.SharderOptions{Namespace: ring.Namespace, Logger: controlplanetest.QuietLogger(),
		RetryPeriod: retryPeriod, Leader: append([]leader.Option{leader.WithIdentity(name + "-sharder")}, timing...)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	r.done.Add(2)
	go func() {
		defer r.done.Done()
		err := shard.Join(ctx, kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), ring, term,
			append([]leader.Option{leader.WithIdentity(name)}, timing...)...)
		if err != nil {
			t.Errorf("%s: member: %v", name, err)
		}
	}()
	go func() {
		defer r.done.Done()
		if err := s.Run(ctx); err != nil {
			t.Errorf("%s: sharder: %v", name, err)
		}
	}()
	t.Cleanup(r.stop)
	for r.cur.Load() == nil {
		if ctx.Err() != nil {
			t.Fatalf("%s stopped before its first term", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r
}

// stop ends the replica as a rolling upgrade does, and waits until its
// member and sharder have returned.
func (r *ringReplica) stop() {
	r.cancel()
	r.done.Wait()
}

// cached returns the keys of the ConfigMaps in the replica's cache.
func (r *ringReplica) cached() []string { return r.cur.Load().cms.Informer().GetStore().ListKeys() }

// id returns the member ID of the replica's current term.
func (r *ringReplica) id() string { return r.cur.Load().m.ID() }

// convergeBound bounds each wait of TestThreeReplicasShareThreeThousandObjects
// for 3,000 objects to reach a state. It is no measurement (the times are
// logged): only a liveness bound, so that replicas that never converge
// fail the test instead of hanging it. On an idle machine each wait takes
// seconds; three minutes leave room for a machine loaded many times over.
const convergeBound = 3 * time.Minute

// handleTime is how long each handler call of the replicas takes.
const handleTime = 10 * time.Millisecond

// finalRound is the data.round of every ConfigMap's last write, once touch
// stopped.
const finalRound = "final"

// touch changes every ConfigMap of names, over and over, eight at a time,
// until the returned function is called; that waits for the last changes,
// then gives every ConfigMap its final state (data.round finalRound).
func touch(t *testing.T, ns string, names []string) (stop func()) {
	t.Helper()
	c := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; ctx.Err() == nil; round++ {
				for i := w; i < len(names) && ctx.Err() == nil; i += 8 {
					patch := fmt.Sprintf(`{"data":{"round":"%d"}}`, round)
					_, _ = c.Patch(ctx, names[i], types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				}
			}
		}()
	}
	return func() {
		cancel()
		wg.Wait()
		patchAll(t, ns, names, fmt.Sprintf(`{"data":{"round":%q}}`, finalRound))
	}
}

// patchAll merge-patches every ConfigMap of names with patch, eight at a
// time.
func patchAll(t *testing.T, ns string, names []string, patch string) {
	t.Helper()
	c := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(names); i += 8 {
				if _, err := c.Patch(t.Context(), names[i], types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// createConfigMaps creates n ConfigMaps, eight at a time.
func createConfigMaps(t *testing.T, ns string, n int) []string {
	t.Helper()
	c := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
	names := make([]string, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		names[i] = fmt.Sprintf("cm-%04d", i)
		wg.Add(1)
		sem <- struct{}{}
		go func(name string) {
			defer func() { <-sem; wg.Done() }()
			_, err := c.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
				Data: map[string]string{"k": name}}, metav1.CreateOptions{})
			errs <- err
		}(names[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// waitAllMarked waits until every ConfigMap of names is assigned to the
// replica of want that Pick chooses, with no drain pending, and was last
// handled by it; it returns the replica of each.
func waitAllMarked(t *testing.T, ns string, names []string, want ...*ringReplica) map[string]string {
	t.Helper()
	var got map[string]string
	deadline := time.Now().Add(convergeBound)
	for {
		// A replica's ID changes if its membership is lost (a new term).
		byID := map[string]string{}
		var ids []string
		for _, r := range want {
			byID[r.id()] = r.name
			ids = append(ids, r.id())
		}
		l, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = map[string]string{}
		done := 0
		for _, cm := range l.Items {
			owner := byID[cm.Labels[shard.AssignmentLabel(ringName)]]
			got[cm.Name] = owner
			if owner != "" && cm.Labels[shard.AssignmentLabel(ringName)] == shard.Pick(ns+"/"+cm.Name, ids) &&
				cm.Annotations[handledBy] == owner && cm.Labels[shard.DrainLabel(ringName)] == "" {
				done++
			}
		}
		if done == len(names) {
			return got
		}
		if time.Now().After(deadline) {
			counts := map[string]int{}
			for _, cm := range l.Items {
				counts[cm.Labels[shard.AssignmentLabel(ringName)]+"/"+cm.Annotations[handledBy]+"/"+cm.Labels[shard.DrainLabel(ringName)]]++
			}
			t.Logf("replicas by ID %v; ConfigMaps by assignment/handled by/drain: %v", byID, counts)
			t.Fatalf("after %v, %d of %d ConfigMaps are assigned to and handled by a replica of %d", convergeBound, done, len(names), len(want))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestThreeReplicasShareThreeThousandObjects: three replicas, each a ring
// member and a sharder candidate, over 3,000 ConfigMaps. Each caches
// exactly its share (about a third); a replica stopped hands its objects
// to the others, which handle them; a replica that joins the two left
// takes about a third, drained from them, and nothing moves between them;
// every ConfigMap keeps changing meanwhile, and its final state reaches a
// handler. No object is ever handled by two replicas at overlapping
// times, nor by a replica after it lost it. It asserts no durations: the
// times it takes are logged (docs/benchmarks.md has the measurements);
// each wait has a bound of minutes only so that a replica that never
// converges fails the test instead of hanging it.
func TestThreeReplicasShareThreeThousandObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 objects")
	}
	const n = 3000
	ns := controlplanetest.Namespace(t, cp().Config())
	ring := testRing(ns)
	names := createConfigMaps(t, ns, n)
	rec := &spans{all: map[string][]span{}}
	a, b, c := startRingReplica(t, ring, "a", rec), startRingReplica(t, ring, "b", rec), startRingReplica(t, ring, "c", rec)
	losses := watchLosses(t, ns)

	began := time.Now()
	owners := waitAllMarked(t, ns, names, a, b, c)
	t.Logf("3 replicas: every ConfigMap assigned and handled %v after they started", time.Since(began).Round(time.Millisecond))
	checkShares(t, ns, n, owners, a, b, c)

	// c stops, as in a rolling upgrade: its lease is released once its
	// handlers returned, and its objects go to a and b directly.
	var onC []string
	for name, owner := range owners {
		if owner == "c" {
			onC = append(onC, name)
		}
	}
	stopped := time.Now()
	c.stop()
	owners = waitAllMarked(t, ns, names, a, b)
	for _, name := range onC {
		if !rec.handledAfter(ns+"/"+name, "c", stopped) {
			t.Errorf("%s, c's, was not handled by a or b after c stopped", name)
		}
	}
	t.Logf("c stopped: its %d ConfigMaps handled by a and b %v later", len(onC), time.Since(stopped).Round(time.Millisecond))

	// d joins: about a third of the objects move to it, each drained from
	// its old replica first; nothing moves between a and b. Meanwhile
	// every ConfigMap keeps changing, so a and b are handling objects
	// when they are asked to let them go.
	joined := time.Now()
	terms := termsOf(a, b)
	stopTouching := touch(t, ns, names)
	d := startRingReplica(t, ring, "d", rec)
	waitAllMarked(t, ns, names, a, b, d)
	stopTouching()
	after := waitAllMarked(t, ns, names, a, b, d)
	controlplanetest.Eventually(t, convergeBound, "every ConfigMap's final state handled", func() bool {
		return len(rec.finalStatesUnhandled(ns, finalStates(names))) == 0
	})
	t.Logf("d joined: every ConfigMap moved and handled in its final state %v later", time.Since(joined).Round(time.Millisecond))
	checkMovesToTheJoiner(t, n, owners, after, terms == termsOf(a, b))
	checkShares(t, ns, n, after, a, b, d)

	// Every replica stops, so that every handler call is recorded, and
	// the watch catches up with every move, before the checks.
	var stopping sync.WaitGroup
	for _, r := range []*ringReplica{a, b, d} {
		stopping.Go(r.stop)
	}
	stopping.Wait()
	l := losses.caughtUp(t, "zz-last")
	for _, r := range []*ringReplica{a, b, c, d} {
		if n := r.terms.Load(); n != 1 {
			t.Logf("%s ran %d membership terms (a lost membership starts a new one)", r.name, n)
		}
	}
	if len(l) < n/3*2*80/100 {
		t.Errorf("the watch saw %d losses, want at least about %d (c's third, then d's)", len(l), n/3*2)
	}
	if late := rec.handledAfterLoss(l); len(late) > 0 {
		slices.Sort(late)
		t.Errorf("%d ConfigMaps were handled by a replica after it lost them, e.g. %s", len(late), late[0])
	}
	if o := rec.overlaps(); len(o) > 0 {
		slices.Sort(o)
		t.Errorf("%d ConfigMaps were handled by two replicas at overlapping times, e.g. %s", len(o), o[0])
	}
}
