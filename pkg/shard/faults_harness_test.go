package shard_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
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

// The fault test's timing: longer than the package's, since six replicas,
// a sharder election and continuous writes share the machine with the API
// server; a renewal late by more than the renew deadline would end a term
// (which the test allows, but which slows every handover down).
var faultTiming = []leader.Option{leader.WithLeaseDuration(3 * time.Second), leader.WithRenewDeadline(2 * time.Second),
	leader.WithRetryPeriod(500 * time.Millisecond), leader.WithLogger(controlplanetest.QuietLogger())}

// faultHandleTime is how long each handler run takes before it writes, so
// that replicas are busy when they stop and a move or a takeover while a
// run is under way would show as an overlap; slowHandleTime is that of the
// runs of a replica about to be stopped (see runLog.slowDown), longer than
// a takeover after a release, so that a replica stopped while one runs
// would overlap with the next leader's run for its object if the lease
// went before the run ended.
const (
	faultHandleTime = 50 * time.Millisecond
	slowHandleTime  = 1500 * time.Millisecond
)

// handlerRun is one handler call: by which replica (process) in which term
// (a member ID, or the leader's term number), for which object, given
// which value of data.seq (-1: deleted or unset), and when.
type handlerRun struct {
	replica, term, key string
	seq                int
	start, end         time.Time
}

// runLog records every handler run of every replica of the fault test.
type runLog struct {
	mu   sync.Mutex
	runs []handlerRun
	slow map[string]bool // replicas whose runs take slowHandleTime
	busy map[string]int  // slow runs under way, by replica
}

// slowDown makes the runs of replica begun from now on take
// slowHandleTime.
func (l *runLog) slowDown(replica string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.slow == nil {
		l.slow, l.busy = map[string]bool{}, map[string]int{}
	}
	l.slow[replica] = true
}

// isBusy reports whether a slow run of replica is under way.
func (l *runLog) isBusy(replica string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.busy[replica] > 0
}

// hold sleeps for the run of replica: slowHandleTime if it was slowed
// down, faultHandleTime otherwise.
func (l *runLog) hold(replica string) {
	l.mu.Lock()
	slow := l.slow[replica]
	if slow {
		l.busy[replica]++
	}
	l.mu.Unlock()
	if !slow {
		time.Sleep(faultHandleTime)
		return
	}
	time.Sleep(slowHandleTime)
	l.mu.Lock()
	l.busy[replica]--
	l.mu.Unlock()
}

func (l *runLog) add(r handlerRun) {
	l.mu.Lock()
	l.runs = append(l.runs, r)
	l.mu.Unlock()
}

func (l *runLog) all() []handlerRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]handlerRun(nil), l.runs...)
}

// termStart is when a replica started leading (its term function was
// called).
type termStart struct {
	replica string
	at      time.Time
}

// termLog records the terms of the leader-elected replicas.
type termLog struct {
	mu    sync.Mutex
	terms []termStart
}

func (l *termLog) add(replica string) {
	l.mu.Lock()
	l.terms = append(l.terms, termStart{replica: replica, at: time.Now()})
	l.mu.Unlock()
}

func (l *termLog) all() []termStart {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]termStart(nil), l.terms...)
}

// firstOtherAfter returns the first term started after t by a replica
// other than not (zero if none).
func (l *termLog) firstOtherAfter(not string, t time.Time) time.Time {
	for _, s := range l.all() {
		if s.replica != not && s.at.After(t) {
			return s.at
		}
	}
	return time.Time{}
}

// faultReplica is one process of the fault test: every connection it makes
// (lease, informers, handlers' writes, sharder) goes through its proxy, so
// the test can cut it off or, cutting it and ending its context, kill it
// without a release.
type faultReplica struct {
	name   string
	proxy  *controlplanetest.Proxy
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu sync.Mutex
	e  *leader.Elector // leader-elected replicas
	m  *shard.Member   // members: the current term's
}

// stop ends the replica's context and waits for it to return: a clean
// stop (the lease is released once its handlers returned).
func (r *faultReplica) stop() {
	r.cancel()
	r.done.Wait()
}

// kill cuts the replica off, then ends it: nothing it sends arrives, so
// its lease is not released but expires, as after a crash.
func (r *faultReplica) kill() {
	r.proxy.Cut()
	r.stop()
}

func (r *faultReplica) member() *shard.Member {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m
}

// replicaConfig is a replica's config: through a proxy of its own, with a
// QPS for hundreds of objects.
func replicaConfig(t *testing.T, base *rest.Config) (*controlplanetest.Proxy, *rest.Config) {
	proxy, cfg := controlplanetest.NewProxy(t, base)
	cfg.QPS, cfg.Burst = 200, 400
	return proxy, cfg
}

// markHandler is the fault test's handler: it records the run, takes
// faultHandleTime, and marks the ConfigMap as handled by the replica (an
// update, so conditional on the version it was given).
func markHandler(cms *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList], replica string, term func() string, log *runLog) generic.ObjectHandler[*corev1.ConfigMap] {
	return func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		r := handlerRun{replica: replica, term: term(), key: key, seq: -1, start: time.Now()}
		defer func() { r.end = time.Now(); log.add(r) }()
		if cm != nil {
			if n, err := strconv.Atoi(cm.Data["seq"]); err == nil {
				r.seq = n
			}
		}
		log.hold(replica)
		if cm == nil || cm.Annotations[handledBy] == replica {
			return cm, nil
		}
		cm = cm.DeepCopy()
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[handledBy] = replica
		return cms.Update(context.Background(), cm)
	}
}

// startLeaderReplica starts a replica of a controller of ns's ConfigMaps
// under leader election on the Lease "faults".
func startLeaderReplica(t *testing.T, base *rest.Config, ns, name string, log *runLog, terms *termLog) *faultReplica {
	t.Helper()
	r := &faultReplica{name: name}
	proxy, cfg := replicaConfig(t, base)
	r.proxy = proxy
	e, err := leader.New(kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), ns, "faults", append([]leader.Option{leader.WithIdentity(name)}, faultTiming...)...)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	f, err := generic.NewFactoryFromConfig(e.Fence(cfg), nil, e.FactoryOptions(&generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
	}))
	if err != nil {
		t.Fatal(err)
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	var term int
	var termMu sync.Mutex
	cms.OnChange(t.Context(), "mark", markHandler(cms, name, func() string {
		termMu.Lock()
		defer termMu.Unlock()
		return strconv.Itoa(term)
	}, log))
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		_ = e.Run(ctx, func(ctx context.Context) error {
			termMu.Lock()
			term++
			termMu.Unlock()
			terms.add(name)
			return f.Run(ctx, 8)
		})
	}()
	t.Cleanup(r.stop)
	return r
}

// startMemberReplica starts a replica of a sharded controller of ring's
// ConfigMaps: a member (shard.Join) and a sharder candidate.
func startMemberReplica(t *testing.T, base *rest.Config, ring shard.Ring, name string, log *runLog) *faultReplica {
	t.Helper()
	r := &faultReplica{name: name}
	proxy, cfg := replicaConfig(t, base)
	r.proxy = proxy
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
		cms.OnChange(ctx, "mark", markHandler(cms, name, m.ID, log))
		r.mu.Lock()
		r.m = m
		r.mu.Unlock()
		return f.Run(ctx, 8)
	}
	s, err := shard.NewSharder(cfg, ring, shard.SharderOptions{Namespace: ring.Namespace, Logger: controlplanetest.QuietLogger(),
		RetryPeriod: 500 * time.Millisecond, Leader: append([]leader.Option{leader.WithIdentity(name + "-sharder")}, faultTiming...)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	r.done.Add(2)
	go func() {
		defer r.done.Done()
		err := shard.Join(ctx, kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), ring, term,
			append([]leader.Option{leader.WithIdentity(name)}, faultTiming...)...)
		if err != nil && ctx.Err() == nil {
			t.Errorf("%s: member: %v", name, err)
		}
	}()
	go func() {
		defer r.done.Done()
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("%s: sharder: %v", name, err)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

// describe names a run for failure messages.
func (r handlerRun) describe() string {
	return fmt.Sprintf("%s (term %s) %s-%s", r.replica, r.term, r.start.Format("15:04:05.000000"), r.end.Format("15:04:05.000000"))
}

// createConfigMapsIn creates n ConfigMaps in ns.
func createConfigMapsIn(t *testing.T, kube kubernetes.Interface, ns string, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("cm-%04d", i)
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names[i]},
			Data: map[string]string{"seq": "0"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// keepWriting changes every object, one write every 20 ms per namespace,
// until the returned function is called (it waits for the writers).
// Writes fail while the API server restarts; that is expected.
func keepWriting(t *testing.T, kube kubernetes.Interface, names map[string][]string) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for ns, list := range names {
		wg.Go(func() {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for seq := 1; ; seq++ {
				for _, name := range list {
					select {
					case <-done:
						return
					case <-tick.C:
					}
					patch := `{"data":{"seq":"` + strconv.Itoa(seq) + `"}}`
					_, _ = kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

// watchLossesIn records every loss of ConfigMaps in ns (see watchLosses)
// on the API server behind kube. It watches again after the watch ends (an
// API server restart), from where it was.
func watchLossesIn(t *testing.T, kube kubernetes.Interface, ns string) func() []loss {
	t.Helper()
	var mu sync.Mutex
	var losses []loss
	last := map[string]string{}
	go func() {
		rv := ""
		for t.Context().Err() == nil {
			w, err := kube.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				time.Sleep(100 * time.Millisecond) // the API server restarting
				continue
			}
			for ev := range w.ResultChan() {
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					rv = "" // an error (410 Gone after the restart): start again
					continue
				}
				rv = cm.ResourceVersion
				cur := cm.Labels[shard.AssignmentLabel(ringName)]
				key := cm.Namespace + "/" + cm.Name
				mu.Lock()
				if prev := last[key]; prev != "" && prev != cur {
					losses = append(losses, loss{key: key, id: prev, at: time.Now()})
				}
				last[key] = cur
				mu.Unlock()
			}
		}
	}()
	return func() []loss {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(losses)
	}
}
