package shard

import (
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSharderKeepsAMemberWhoseClockRunsBehind: a member whose clock runs
// 1.5 lease durations behind the sharder's, far beyond the clock-skew
// allowance, writes renewTimes that are already expired by the sharder's
// clock, but it keeps renewing. The sharder does not take its first sight
// of the Lease for a renewal (TestNewSharderDoesNotReviveTheDead), so the
// member is live once the sharder has seen a renewal arrive; from then on
// it counts live by when it saw each renewal arrive, so the member gets
// its share and keeps it, it is never taken for dead, and its Lease is
// never collected.
func TestSharderKeepsAMemberWhoseClockRunsBehind(t *testing.T) {
	ring := testRing(t, configMaps)
	a, b := startMember(t, ring, "a"), startMember(t, ring, "b")
	late := startMemberBehind(t, ring, "late", memberLease*3/2)
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	s := newSharder(t, config(), ring, o)
	runSharder(t, s)
	neverDead := func(v *view) {
		t.Helper()
		if v != nil && v.valid && v.dead[late.id] {
			t.Fatalf("member with a clock %v behind taken for dead: live %v, dead %v", late.behind, v.live, v.dead)
		}
	}
	eventually(t, "the member with a clock behind live", func() bool {
		v := s.view()
		neverDead(v)
		return v != nil && v.valid && v.liveSet[late.id]
	})
	// The objects come once every member is live: the test's members do
	// not acknowledge drains.
	createConfigMaps(t, ring.Namespace, "cm", 90)

	// Every valid view from here on counts it live, for several lease
	// durations (each renewal it wrote expired on arrival).
	checkLive := func(d time.Duration) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			v := s.view()
			neverDead(v)
			if v != nil && v.valid && !v.liveSet[late.id] {
				t.Fatalf("member with a clock %v behind not live: live %v, dead %v", late.behind, v.live, v.dead)
			}
		}
	}
	checkLive(memberLease)
	before := waitSettled(t, ring, a, b, late)
	mine := 0
	for _, st := range before {
		if st.member == late.id {
			mine++
		}
	}
	if mine == 0 {
		t.Fatal("the member with a clock behind got no object")
	}
	checkLive(2 * memberLease)
	if after := configMapStates(t, ring); !maps.Equal(before, after) {
		t.Errorf("objects moved although every member kept renewing:\nbefore %v\nafter  %v", before, after)
	}
	if !leaseExists(t, late) {
		t.Error("the Lease of the member with a clock behind was deleted")
	}
}

// TestSharderLeaseGCLosesToARenewal: the sharder collects a dead member's
// Lease, and the member renews it between the sharder's last look and its
// delete (the test's transport renews it just before the DELETE goes out);
// the delete is conditional on what the sharder saw, so it fails and the
// renewed Lease survives.
func TestSharderLeaseGCLosesToARenewal(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "cm", 30)
	a, c := startMember(t, ring, "a"), startMember(t, ring, "c")
	leases := clientset().CoordinationV1().Leases(ring.Namespace)

	var (
		mu       sync.Mutex
		raced    bool
		status   int
		survived bool
	)
	cfg := config()
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodDelete || !strings.HasSuffix(r.URL.Path, "/leases/"+c.name) {
				return next.RoundTrip(r)
			}
			mu.Lock()
			defer mu.Unlock()
			if raced {
				return next.RoundTrip(r)
			}
			raced = true
			// The member comes back: a renewal lands after the
			// sharder decided and before its delete arrives.
			l, err := leases.Get(r.Context(), c.name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("reading the Lease before the delete: %v", err)
				return next.RoundTrip(r)
			}
			now := metav1.NowMicro()
			l.Spec.RenewTime = &now
			if _, err := leases.Update(r.Context(), l, metav1.UpdateOptions{}); err != nil {
				t.Errorf("renewing the Lease before the delete: %v", err)
			}
			resp, err := next.RoundTrip(r)
			if err == nil {
				status = resp.StatusCode
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				resp.Body = io.NopCloser(strings.NewReader(string(body)))
			}
			_, gerr := leases.Get(r.Context(), c.name, metav1.GetOptions{})
			if gerr != nil && !apierrors.IsNotFound(gerr) {
				t.Errorf("reading the Lease after the delete: %v", gerr)
			}
			survived = gerr == nil
			return resp, err
		})
	})
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	runSharder(t, newSharder(t, cfg, ring, o))
	waitSettled(t, ring, a, c)

	c.expire()
	waitSettled(t, ring, a)
	eventually(t, "the sharder to try to delete the dead member's Lease", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return raced && (status != 0 || survived)
	})
	mu.Lock()
	defer mu.Unlock()
	if !survived {
		t.Fatalf("the Lease renewed after the sharder saw it dead was deleted (DELETE answered %d)", status)
	}
	if status != http.StatusConflict {
		t.Errorf("the conditional delete answered %d, want %d (Conflict)", status, http.StatusConflict)
	}
}

// TestNewSharderRefusesANegativeClockSkew: a negative allowance would take
// members for not live although their renewTime says they are; NewSharder
// refuses it and says why.
func TestNewSharderRefusesANegativeClockSkew(t *testing.T) {
	o := sharderOptions(nil)
	o.ClockSkew = -time.Second
	_, err := NewSharder(config(), Ring{Name: "ring", Namespace: "default", Kinds: []Kind{configMaps}}, o)
	if err == nil || !strings.Contains(err.Error(), "clock-skew allowance") {
		t.Fatalf("NewSharder with a negative clock skew: %v, want an error naming the clock-skew allowance", err)
	}
}
