package shard_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// span is one handler call of one replica, in the term with member ID id,
// for one object, given the object's data.round (the state the touch
// writers last gave it, "" before they began).
type span struct {
	replica    string
	id         string
	round      string
	start, end time.Time
}

// spans records every handler call of every replica, by object key.
type spans struct {
	mu  sync.Mutex
	all map[string][]span
}

func (s *spans) add(key string, sp span) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all[key] = append(s.all[key], sp)
}

// handledAfter reports whether replica other than not handled key after t.
func (s *spans) handledAfter(key, not string, t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.all[key] {
		if sp.replica != not && sp.start.After(t) {
			return true
		}
	}
	return false
}

// loss is the moment a member lost an object: the object's assignment
// changed from that member's ID to another value (none, while it waits
// for its next member).
type loss struct {
	key, id string
	at      time.Time
}

// lossWatch records every loss of ConfigMaps in one namespace, as seen by
// a watch (a moment after it happened), until the test ends.
type lossWatch struct {
	ns     string
	mu     sync.Mutex
	losses []loss
	seen   map[string]bool // names of the ConfigMaps the watch saw
}

// watchLosses starts recording the losses of ConfigMaps in ns.
func watchLosses(t *testing.T, ns string) *lossWatch {
	t.Helper()
	w, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	lw := &lossWatch{ns: ns, seen: map[string]bool{}}
	last := map[string]string{}
	go func() {
		for ev := range w.ResultChan() {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				continue
			}
			cur := cm.Labels[shard.AssignmentLabel(ringName)]
			key := cm.Namespace + "/" + cm.Name
			lw.mu.Lock()
			if prev := last[key]; prev != "" && prev != cur {
				lw.losses = append(lw.losses, loss{key: key, id: prev, at: time.Now()})
			}
			last[key] = cur
			lw.seen[cm.Name] = true
			lw.mu.Unlock()
		}
	}()
	return lw
}

// caughtUp creates a ConfigMap named marker in the namespace and returns
// every loss recorded once the watch saw it: a watch delivers in order,
// so every change made before is in by then.
func (lw *lossWatch) caughtUp(t *testing.T, marker string) []loss {
	t.Helper()
	if _, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(lw.ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: marker}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the watch of losses seeing "+marker, func() bool {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return lw.seen[marker]
	})
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return slices.Clone(lw.losses)
}

// finalStatesUnhandled returns the keys of last (name to the data.round
// its last write set) whose final state no handler call was given yet.
func (s *spans) finalStatesUnhandled(ns string, last map[string]string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name, round := range last {
		if !slices.ContainsFunc(s.all[ns+"/"+name], func(sp span) bool { return sp.round == round }) {
			out = append(out, ns+"/"+name)
		}
	}
	return out
}

// handledAfterLoss returns, for each loss after which the member (the
// term of a replica) that lost the object still handled it (a call
// running at the loss or begun after it), a description. An object never
// returns to a member ID that lost it: a replica whose membership was lost
// comes back under a new ID.
func (s *spans) handledAfterLoss(losses []loss) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range losses {
		for _, sp := range s.all[l.key] {
			if sp.id == l.id && sp.end.After(l.at) {
				out = append(out, fmt.Sprintf("%s: %s (member %s) lost it at %v and handled it %v-%v", l.key, sp.replica, l.id, l.at, sp.start, sp.end))
				break
			}
		}
	}
	return out
}

// overlaps returns, for each key two replicas handled in overlapping
// time, a description of the first such pair.
func (s *spans) overlaps() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for key, list := range s.all {
	pairs:
		for i, a := range list {
			for _, b := range list[i+1:] {
				if a.replica != b.replica && a.start.Before(b.end) && b.start.Before(a.end) {
					out = append(out, fmt.Sprintf("%s: %s %v-%v and %s %v-%v", key, a.replica, a.start, a.end, b.replica, b.start, b.end))
					break pairs
				}
			}
		}
	}
	return out
}

// finalStates maps every name to finalRound.
func finalStates(names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		out[n] = finalRound
	}
	return out
}

// termsOf returns how many membership terms rs have run, in all.
func termsOf(rs ...*ringReplica) int32 {
	var n int32
	for _, r := range rs {
		n += r.terms.Load()
	}
	return n
}

// checkShares checks that each of rs was assigned about a third of the n
// ConfigMaps (owners: name to replica), and that its cache comes to hold
// exactly the ConfigMaps assigned to its term, no more (a member caches
// only its share) and no fewer.
func checkShares(t *testing.T, ns string, n int, owners map[string]string, rs ...*ringReplica) {
	t.Helper()
	count := map[string]int{}
	for _, owner := range owners {
		count[owner]++
	}
	for _, r := range rs {
		if got := count[r.name]; got < n/3*85/100 || got > n/3*115/100 {
			t.Errorf("%s was assigned %d ConfigMaps, want about %d", r.name, got, n/3)
		}
		var diff string
		controlplanetest.Eventually(t, convergeBound, r.name+"'s cache holding its share", func() bool {
			l, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).List(t.Context(),
				metav1.ListOptions{LabelSelector: shard.AssignmentLabel(ringName) + "=" + r.id()})
			if err != nil {
				return false
			}
			want := make([]string, 0, len(l.Items))
			for _, cm := range l.Items {
				want = append(want, ns+"/"+cm.Name)
			}
			got := r.cached()
			slices.Sort(want)
			slices.Sort(got)
			diff = fmt.Sprintf("caches %d, assigned %d", len(got), len(want))
			return slices.Equal(got, want)
		})
		t.Logf("%s: %s", r.name, diff)
	}
}

// checkMovesToTheJoiner checks that, when d joined a and b, about a third
// of the n ConfigMaps moved from a or b (before) to d (after), and none
// between a and b. A replica whose membership was lost meanwhile (stable
// is false) came back under a new ID, which moves objects among all three
// by design: then only the count is logged.
func checkMovesToTheJoiner(t *testing.T, n int, before, after map[string]string, stable bool) {
	t.Helper()
	moved, between := 0, []string{}
	for name, owner := range after {
		if owner == before[name] {
			continue
		}
		moved++
		if owner != "d" {
			between = append(between, fmt.Sprintf("%s moved from %s to %s", name, before[name], owner))
		}
	}
	t.Logf("d joined: %d of %d ConfigMaps moved to it, %d between a and b", moved-len(between), n, len(between))
	if !stable {
		t.Logf("a or b lost its membership while d joined: the moves are not checked")
		return
	}
	if len(between) > 0 {
		slices.Sort(between)
		t.Errorf("%d ConfigMaps moved between a and b when d joined, e.g. %s", len(between), between[0])
	}
	if moved < n/3*80/100 || moved > n/3*120/100 {
		t.Errorf("%d ConfigMaps moved when d joined, want about %d", moved, n/3)
	}
}
