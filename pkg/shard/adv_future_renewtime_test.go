package shard

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdvNewSharderRevivesADeadMemberWhoseClockRanAhead: a member whose
// clock ran an hour ahead of the others (a node whose NTP failed) renewed
// its Lease, then crashed. Its Lease says renewTime = now + 1 h. A sharder
// elected afterwards takes the renewTime as recent: the clock-skew
// allowance bounds only clocks that run behind, and a renewTime in the
// future is trusted whole, so the dead member counts as live for an hour
// (the read that confirms liveness reads the same Lease). Objects are
// assigned to it and sit unhandled: the new sharder revived the dead
// (docs/replicas.md: "a sharder elected after the last one crashed,
// finding the Lease of a member dead for an hour, does not count it
// live").
func TestAdvNewSharderRevivesADeadMemberWhoseClockRanAhead(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ctx := t.Context()
	ring := Ring{Name: "advahead", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}

	// What the crashed member left: its Lease, last renewed by a clock an
	// hour ahead.
	deadIdentity := "node-ahead_0123456789ab"
	dead := MemberID(deadIdentity)
	renewed := metav1.NewMicroTime(time.Now().Add(time.Hour))
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: MemberLeaseName(ring.Name, dead), Labels: map[string]string{RingLabel: ring.Name}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(deadIdentity),
			LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime:          &renewed,
			RenewTime:            &renewed,
		},
	}
	if _, err := kube.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	spans := &advSpans{release: make(chan struct{})}
	live := advMember(t, ring, "live", kube.CoordinationV1(), spans, nil, false)
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Run(t, s.Run)

	const n = 20
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i)}}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var toDead []string
	controlplanetest.Eventually(t, 2*time.Minute, "every object assigned", func() bool {
		list, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		toDead = nil
		for _, cm := range list.Items {
			switch cm.Labels[AssignmentLabel(ring.Name)] {
			case "":
				return false
			case dead:
				toDead = append(toDead, cm.Name)
			}
		}
		return len(list.Items) == n
	})
	if len(toDead) > 0 {
		t.Fatalf("the sharder assigned %d of %d objects to member %s, dead (crashed after a last renewal stamped %s by a clock an hour ahead), rather than to the live member %s: %v",
			len(toDead), n, dead, renewed.UTC().Format(time.RFC3339), live.ID(), toDead)
	}
}
