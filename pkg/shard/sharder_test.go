package shard

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// TestSharderAssignsEveryObjectEvenly: Secrets hash by their own key,
// ConfigMaps follow the Secret that controls them; with three members every
// object is assigned, each member gets about a third, and each child lands
// with its owner.
func TestSharderAssignsEveryObjectEvenly(t *testing.T) {
	ring := testRing(t, secrets, Kind{GVK: configMaps.GVK, Owner: schema.GroupKind{Kind: "Secret"}})
	cs := clientset()
	const n = 600
	uids := map[string]metav1.OwnerReference{}
	for i := range n {
		s, err := cs.CoreV1().Secrets(ring.Namespace).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if i%6 == 0 {
			uids[s.Name] = metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: s.Name, UID: s.UID, Controller: ptr.To(true)}
		}
	}
	for owner, ref := range uids {
		if _, err := cs.CoreV1().ConfigMaps(ring.Namespace).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "child-of-" + owner, OwnerReferences: []metav1.OwnerReference{ref}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createConfigMaps(t, ring.Namespace, "orphan", 20)
	// An object being deleted is assigned like the others: its
	// finalizer needs a member to run.
	doomed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "doomed", Finalizers: []string{"test.lariat.dev/hold"}}}
	if _, err := cs.CoreV1().ConfigMaps(ring.Namespace).Create(t.Context(), doomed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ring.Namespace).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ms := []*member{startMember(t, ring, "a"), startMember(t, ring, "b"), startMember(t, ring, "c")}
	ids := []string{ms[0].id, ms[1].id, ms[2].id}
	reg := prometheus.NewRegistry()
	o := sharderOptions(nil)
	o.Registerer = reg
	o.Namespace = ring.Namespace
	runSharder(t, newSharder(t, config(), ring, o))
	start := time.Now()

	label := AssignmentLabel(ring.Name)
	var secretsOf map[string]string
	eventually(t, "every Secret assigned", func() bool {
		l, err := cs.CoreV1().Secrets(ring.Namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		secretsOf = map[string]string{}
		for _, s := range l.Items {
			if s.Labels[label] == "" {
				return false
			}
			secretsOf[s.Name] = s.Labels[label]
		}
		return len(secretsOf) == n
	})
	t.Logf("%d Secrets assigned %v after the sharder led", n, time.Since(start))
	perMember := map[string]int{}
	for name, m := range secretsOf {
		if want := Pick(ring.Namespace+"/"+name, ids); m != want {
			t.Errorf("Secret %s on %s, want %s", name, m, want)
		}
		perMember[m]++
	}
	for _, id := range ids {
		if c := perMember[id]; c < n/3-n/12 || c > n/3+n/12 {
			t.Errorf("member %s got %d of %d Secrets, want about %d", id, c, n, n/3)
		}
	}
	eventually(t, "every ConfigMap assigned", func() bool {
		for _, s := range configMapStates(t, ring) {
			if s.member == "" {
				return false
			}
		}
		return true
	})
	for name, s := range configMapStates(t, ring) {
		var want string
		if owner, ok := strings.CutPrefix(name, "child-of-"); ok {
			want = secretsOf[owner]
		} else {
			want = Pick(ring.Namespace+"/"+name, ids)
		}
		if s.member != want || s.draining {
			t.Errorf("ConfigMap %s: %+v, want on %s (its owner's member for a child)", name, s, want)
		}
	}
	eventually(t, "lariat_shard_objects to count every object", func() bool {
		sum := 0.0
		for _, id := range ids {
			sum += metricSum(t, reg, "lariat_shard_objects", map[string]string{"ring": ring.Name, "member": id})
		}
		return sum == float64(n+len(uids)+20+1)
	})
	if got := metricSum(t, reg, "lariat_shard_moves_total", nil); got != 0 {
		t.Errorf("lariat_shard_moves_total = %v after first assignments, want 0", got)
	}
}

// TestSharderDrainsOnJoin: a fourth member joins; the objects it wants are
// asked to drain (about a quarter), none moves directly from its live
// member, late drains are reported once each, and once the old members
// acknowledge, the objects land on the new member and nothing else moved.
func TestSharderDrainsOnJoin(t *testing.T) {
	ring := testRing(t, configMaps)
	const n = 400
	createConfigMaps(t, ring.Namespace, "cm", n)
	ms := []*member{startMember(t, ring, "a"), startMember(t, ring, "b"), startMember(t, ring, "c")}
	logs := logtest.NewGlobal()
	logs.Reset()
	reg := prometheus.NewRegistry()
	o := sharderOptions(logs)
	o.Registerer = reg
	o.Namespace = ring.Namespace
	o.DrainTimeout = time.Second
	// A new sharder term knows nothing of the reports of the last one and
	// reports again: on a loaded machine the sharder can lose its 2 s lease
	// and win it back. Its terms are counted from its leader's log.
	terms := leaderTerms(&o)
	runSharder(t, newSharder(t, config(), ring, o))
	before := waitSettled(t, ring, ms...)

	d := startMember(t, ring, "d")
	four := []string{ms[0].id, ms[1].id, ms[2].id, d.id}
	wantDrained := map[string]bool{}
	for name := range before {
		if Pick(ring.Namespace+"/"+name, four) == d.id {
			wantDrained[name] = true
		}
	}
	if c := len(wantDrained); c < n/4-n/10 || c > n/4+n/10 {
		t.Fatalf("the new member wants %d of %d objects, want about %d", c, n, n/4)
	}
	eventually(t, "the new member's objects asked to drain", func() bool {
		st := configMapStates(t, ring)
		for name, s := range st {
			if s.member != before[name].member {
				t.Fatalf("ConfigMap %s moved directly from live member %s to %s", name, before[name].member, s.member)
			}
			if s.draining != wantDrained[name] {
				return false
			}
		}
		return true
	})
	eventually(t, "every late drain reported", func() bool {
		return metricSum(t, reg, "lariat_shard_drains_overdue", nil) == float64(len(wantDrained))
	})
	time.Sleep(500 * time.Millisecond) // a few more report ticks: still once each
	reported := map[string]int{}
	for _, e := range logs.AllEntries() {
		if obj, ok := e.Data["object"].(string); ok && e.Data["member"] != nil {
			reported[obj]++
		}
	}
	for name := range wantDrained {
		if c, n := reported[ring.Namespace+"/"+name], terms(); c < 1 || c > n {
			t.Errorf("drain of %s reported %d times in %d sharder terms, want once per term", name, c, n)
		}
	}
	if len(reported) != len(wantDrained) {
		t.Errorf("%d drains reported, want %d", len(reported), len(wantDrained))
	}
	if got := metricSum(t, reg, "lariat_shard_drains_pending", nil); got != float64(len(wantDrained)) {
		t.Errorf("lariat_shard_drains_pending = %v, want %d", got, len(wantDrained))
	}
	if got := metricSum(t, reg, "lariat_shard_moves_total", nil); got != float64(len(wantDrained)) {
		t.Errorf("lariat_shard_moves_total = %v, want %d", got, len(wantDrained))
	}
	for _, name := range slices.Sorted(maps.Keys(wantDrained)) {
		ack(t, ring, name)
	}
	after := waitSettled(t, ring, append(ms, d)...)
	for name, s := range after {
		if !wantDrained[name] && s.member != before[name].member {
			t.Errorf("ConfigMap %s moved from %s to %s without being drained", name, before[name].member, s.member)
		}
	}
	eventually(t, "no drain pending", func() bool {
		return metricSum(t, reg, "lariat_shard_drains_pending", nil) == 0
	})
}

// TestSharderMovesADeadMembersObjects: a member whose lease expires has its
// objects reassigned directly (no drain: it stopped writing before its lease
// expired); a member that
// releases its lease loses its objects on the release (its Lease would
// hold for another hour); the others keep theirs.
func TestSharderMovesADeadMembersObjects(t *testing.T) {
	ring := testRing(t, configMaps)
	const n = 300
	createConfigMaps(t, ring.Namespace, "cm", n)
	a, b, c := startMember(t, ring, "a"), startMember(t, ring, "b"), startMember(t, ring, "c")
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	runSharder(t, newSharder(t, config(), ring, o))
	before := waitSettled(t, ring, a, b, c)

	last := c.expire()
	after := waitSettled(t, ring, a, b)
	took := time.Since(last)
	// How long the moves take is the machine's speed as much as the
	// protocol's (a hundred writes; 4.3 s against a 5.25 s bound was seen
	// on a loaded machine), so it is logged, not asserted; waitSettled
	// bounds it against a hang. (Member-loss rebalance time belongs in a
	// benchmark: issue 24's fault test.)
	t.Logf("a dead member's objects moved %v after its last renewal (lease %v)", took, memberLease)
	for name, s := range after {
		if before[name].member != c.id && s.member != before[name].member {
			t.Errorf("ConfigMap %s moved off live member %s", name, before[name].member)
		}
	}

	// Once no object names c, its Lease goes (every membership term has
	// a Lease of its own; they must not pile up); the live ones stay.
	eventually(t, "the dead member's Lease deleted", func() bool { return !leaseExists(t, c) })
	if !leaseExists(t, a) || !leaseExists(t, b) {
		t.Fatal("a live member's Lease was deleted")
	}

	// b's Lease says it holds for an hour from its last renewal, so its
	// objects can only move, within the test, on its release.
	b.lengthen(t, time.Hour)
	start := time.Now()
	b.release(t)
	waitSettled(t, ring, a)
	t.Logf("a released member's objects moved %v after its release", time.Since(start))
}

// TestSharderChangesNothingWithoutLiveMembers: with no member, objects stay
// unassigned; when the only member expires, its objects keep their
// assignment (there is nobody to give them to).
func TestSharderChangesNothingWithoutLiveMembers(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "cm", 30)
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	s := newSharder(t, config(), ring, o)
	runSharder(t, s)
	time.Sleep(memberLease)
	for name, st := range configMapStates(t, ring) {
		if st != (state{}) {
			t.Fatalf("ConfigMap %s changed with no live member: %+v", name, st)
		}
	}
	a := startMember(t, ring, "a")
	before := waitSettled(t, ring, a)
	a.expire()
	eventually(t, "the sharder to see no live member", func() bool {
		v := s.view()
		return v != nil && v.valid && len(v.live) == 0 && v.dead[a.id]
	})
	time.Sleep(time.Second)
	if after := configMapStates(t, ring); !maps.Equal(before, after) {
		t.Errorf("objects changed with no live member:\nbefore %v\nafter  %v", before, after)
	}
	if !leaseExists(t, a) {
		t.Error("the dead member's Lease was deleted while objects still name it")
	}
}

// leaseExists reports whether the member's Lease exists.
func leaseExists(t *testing.T, m *member) bool {
	t.Helper()
	_, err := clientset().CoordinationV1().Leases(m.ns).Get(t.Context(), m.name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// view returns the running term's member view (nil while not leading).
func (s *Sharder) view() *view {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil
	}
	return s.cur.members.view()
}

// TestSharderCancelsDrainsWhenTheMoveIsOff: a member joins and leaves again
// before any drain is acknowledged; the drains are removed and every
// object stays where it was.
func TestSharderCancelsDrainsWhenTheMoveIsOff(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "cm", 100)
	a, b := startMember(t, ring, "a"), startMember(t, ring, "b")
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	runSharder(t, newSharder(t, config(), ring, o))
	before := waitSettled(t, ring, a, b)
	c := startMember(t, ring, "c")
	eventually(t, "drains toward the new member", func() bool {
		for _, st := range configMapStates(t, ring) {
			if st.draining {
				return true
			}
		}
		return false
	})
	c.release(t)
	after := waitSettled(t, ring, a, b)
	if !maps.Equal(before, after) {
		t.Errorf("objects moved although the move was called off:\nbefore %v\nafter  %v", before, after)
	}
}
