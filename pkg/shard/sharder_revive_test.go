package shard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestNewSharderDoesNotReviveTheDead: the replica that ran the sharder is
// cut off from the API server (a crash: no release), and meanwhile the
// ring holds the Lease of a member that last renewed an hour ago. The
// sharder elected next must judge that member by the Lease's renewTime,
// not by when it first saw the Lease: it assigns the objects created
// before and after its election to the live members only, moves the
// objects the dead member held to them, and sets no drain (the live
// members stay live). Every label the new sharder writes
// on a ConfigMap is recorded.
func TestNewSharderDoesNotReviveTheDead(t *testing.T) {
	ring := testRing(t, configMaps)
	createConfigMaps(t, ring.Namespace, "before", 30)
	a, b := startMember(t, ring, "a"), startMember(t, ring, "b")

	// The first sharder, behind a proxy the test cuts.
	proxy, cut := controlplanetest.NewProxy(t, config())
	first := sharderOptions(nil)
	first.Namespace = ring.Namespace
	first.Leader = append(first.Leader, leader.WithIdentity("first"))
	runSharder(t, newSharder(t, cut, ring, first))
	waitSettled(t, ring, a, b)
	proxy.Cut()

	// A member that died an hour ago: its Lease still names it.
	dead := "dead"
	createDeadLease(t, ring, dead)
	createConfigMaps(t, ring.Namespace, "between", 30)
	// And objects it still held: the next sharder moves them once it can
	// tell the member no longer writes (a lease duration after it first
	// saw the Lease, since it compares no clocks for that).
	for i := range 5 {
		if _, err := clientset().CoreV1().ConfigMaps(ring.Namespace).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("held-%d", i), Labels: map[string]string{AssignmentLabel(ring.Name): MemberID(dead)},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The next sharder, every ConfigMap label it writes recorded.
	rec := &labelRecorder{}
	cfg := config()
	cfg.Wrap(rec.wrap)
	next := sharderOptions(nil)
	next.Namespace = ring.Namespace
	next.Leader = append(next.Leader, leader.WithIdentity("next"))
	runSharder(t, newSharder(t, cfg, ring, next))
	createConfigMaps(t, ring.Namespace, "after", 30)
	waitSettled(t, ring, a, b)

	var toDead, drained []string
	for _, w := range rec.all() {
		if w.labels[AssignmentLabel(ring.Name)] == MemberID(dead) {
			toDead = append(toDead, w.name)
		}
		if v, ok := w.labels[DrainLabel(ring.Name)]; ok && v != nil {
			drained = append(drained, w.name)
		}
	}
	if len(toDead) > 0 {
		t.Errorf("the new sharder assigned %d objects to the member dead for an hour: %v", len(toDead), toDead)
	}
	if len(drained) > 0 {
		t.Errorf("the new sharder drained %d objects off live members: %v", len(drained), drained)
	}
	if len(rec.all()) == 0 {
		t.Error("the new sharder wrote nothing")
	}
}

// labelWrite is one merge patch of a ConfigMap's labels.
type labelWrite struct {
	name   string
	labels map[string]any
}

// labelRecorder records the labels of every ConfigMap patch sent through
// the transport it wraps.
type labelRecorder struct {
	mu     sync.Mutex
	writes []labelWrite
}

func (r *labelRecorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPatch || !strings.Contains(req.URL.Path, "/configmaps/") || req.Body == nil {
			return next.RoundTrip(req)
		}
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		var p struct {
			Metadata struct {
				Labels map[string]any `json:"labels"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(body, &p)
		r.mu.Lock()
		r.writes = append(r.writes, labelWrite{name: req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:], labels: p.Metadata.Labels})
		r.mu.Unlock()
		return next.RoundTrip(req)
	})
}

func (r *labelRecorder) all() []labelWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]labelWrite(nil), r.writes...)
}

// createDeadLease writes the Lease of member identity as it was left by a
// member that died an hour ago, and returns its renewTime as the API server
// serializes it.
func createDeadLease(t *testing.T, ring Ring, identity string) string {
	t.Helper()
	dur := int32(memberLease / time.Second)
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour).Truncate(time.Microsecond))
	if _, err := clientset().CoordinationV1().Leases(ring.Namespace).Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: MemberLeaseName(ring.Name, MemberID(identity)), Labels: map[string]string{RingLabel: ring.Name}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &identity, LeaseDurationSeconds: &dur,
			AcquireTime: &old, RenewTime: &old},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return old.UTC().Format(metav1.RFC3339Micro)
}

// TestSharderConfirmsALiveMemberBeforeAssigning: the sharder's list and
// watch of the member Leases show the Lease of a member dead for an hour
// as just renewed (what a lagging cache could serve); the read of that
// Lease from the API server says otherwise, and the sharder assigns
// nothing to the member.
func TestSharderConfirmsALiveMemberBeforeAssigning(t *testing.T) {
	ring := testRing(t, configMaps)
	a, b := startMember(t, ring, "a"), startMember(t, ring, "b")
	dead := "dead"
	stale := []byte(createDeadLease(t, ring, dead))
	createConfigMaps(t, ring.Namespace, "cm", 60)

	var rewritten atomic.Int64
	leaseCfg := config()
	leaseCfg.ContentType, leaseCfg.AcceptContentTypes = "application/json", "application/json"
	leaseCfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			// Lists and watches end in /leases; a read of one Lease
			// names it.
			if err == nil && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/leases") {
				resp.Body = &freshening{src: bufio.NewReader(resp.Body), body: resp.Body, stale: stale, n: &rewritten}
			}
			return resp, err
		})
	})
	rec := &labelRecorder{}
	cfg := config()
	cfg.Wrap(rec.wrap)
	o := sharderOptions(nil)
	o.Namespace = ring.Namespace
	o.LeaseConfig = leaseCfg
	runSharder(t, newSharder(t, cfg, ring, o))
	waitSettled(t, ring, a, b)

	if rewritten.Load() == 0 {
		t.Fatal("the sharder's list and watch never showed the dead member's Lease")
	}
	var toDead []string
	for _, w := range rec.all() {
		if w.labels[AssignmentLabel(ring.Name)] == MemberID(dead) {
			toDead = append(toDead, w.name)
		}
	}
	if len(toDead) > 0 {
		t.Errorf("the sharder assigned %d objects to a member whose Lease only its watch showed renewed: %v", len(toDead), toDead)
	}
}

// freshening is a response body in which every occurrence of stale (a
// renewTime) on a line is replaced by the time of reading.
type freshening struct {
	src   *bufio.Reader
	body  io.Closer
	stale []byte
	n     *atomic.Int64
	buf   []byte
}

func (f *freshening) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		line, err := f.src.ReadBytes('\n')
		if bytes.Contains(line, f.stale) {
			f.n.Add(1)
			line = bytes.ReplaceAll(line, f.stale, []byte(time.Now().UTC().Format(metav1.RFC3339Micro)))
		}
		f.buf = line
		if err != nil {
			if len(f.buf) == 0 {
				return 0, err
			}
			break
		}
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

func (f *freshening) Close() error { return f.body.Close() }
