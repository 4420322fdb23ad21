package shard

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAdv11SavedManifestWithTrailHandsTheObjectOver: X runs on member A
// (A claimed it: its trail names A). A user applies a manifest saved
// when X was on member B (kubectl get -o yaml at the time, applied
// again): it carries B's assignment label and B's trail. Nothing in the
// protocol moved X, yet B's gate reads label and trail as B's and admits
// X while A's handler, begun before, still runs. With the ring guard
// (RingPolicy) installed, the user's write is refused with its message
// and nothing moves (adv10UsersLabelsGuarded).
func TestAdv11SavedManifestWithTrailHandsTheObjectOver(t *testing.T) {
	adv10UsersLabelsGuarded(t, "re-applied a saved manifest carrying member B's label and trail", false, true,
		func(cm *corev1.ConfigMap, b string) {
			cm.Labels = map[string]string{AssignmentLabel("advunlabel"): b}
			cm.Annotations = map[string]string{TrailAnnotation("advunlabel"): b}
		})
}

// TestAdv11ReplaceDroppingTheTrailWithAnotherLabelHandsTheObjectOver: X
// runs on member A (trail A). A user's replace with a manifest that
// carries B's assignment label and no trail (a manifest written from an
// object listed before trails existed) makes X read as unclaimed to B:
// B's gate claims it and admits it while A's handler still runs. With
// the ring guard installed, the replace is refused.
func TestAdv11ReplaceDroppingTheTrailWithAnotherLabelHandsTheObjectOver(t *testing.T) {
	adv10UsersLabelsGuarded(t, "replaced X with a manifest carrying member B's label and no trail", false, true,
		func(cm *corev1.ConfigMap, b string) {
			cm.Labels = map[string]string{AssignmentLabel("advunlabel"): b}
			cm.Annotations = nil
		})
}

// TestAdv11ReleasedTrailReappliedDuringADrainHandsTheObjectOver: X runs
// on member A (trail A, its handler held), and the sharder asks A to
// drain it to B. A user applies a manifest saved the last time A let go
// of X: it carries A's release in the trail ("released:<A>@<rv>") and
// leaves the labels. The release is meant to be evidence because only
// A's gate writes it; the sharder takes the copied one for A's
// acknowledgement and assigns X to B, whose handler begins while A's
// still runs. With the ring guard installed, the write is refused, and B
// handles X only after A's handler ended and A's gate released it.
func TestAdv11ReleasedTrailReappliedDuringADrainHandsTheObjectOver(t *testing.T) {
	adv10UsersLabelsGuarded(t, "re-applied an old manifest whose trail records A's release, and the sharder took it for A's acknowledgement", true, true,
		func(cm *corev1.ConfigMap, _ string) {
			a := cm.Labels[AssignmentLabel("advunlabel")]
			cm.Annotations = map[string]string{TrailAnnotation("advunlabel"): releasedTrail(a, "1")}
		})
}
