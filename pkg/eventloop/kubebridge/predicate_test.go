package kubebridge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// TestKindWatchedTwiceSendsWhatEitherWatchAskedFor: ConfigMaps watched
// twice (as when a dependents registration joins a loop whose bridge
// watches the kind already), once with a predicate that cares only about
// data["v"] and once with one that cares only about data["w"]: a change of
// either reaches the loop, and a label change, which neither cares about,
// does not. Before, the second Watch failed ("is already watched").
func TestKindWatchedTwiceSendsWhatEitherWatchAskedFor(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	onlyV := kubebridge.WithPredicate(func(old, new runtime.Object) bool { return value(old) != value(new) })
	onlyW := kubebridge.WithPredicate(func(old, new runtime.Object) bool {
		return old.(*corev1.ConfigMap).Data["w"] != new.(*corev1.ConfigMap).Data["w"]
	})
	_ = startLoopWatching(t, ctx, ns, nil, log, [][]kubebridge.WatchOption{{onlyV}, {onlyW}}, rec)

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Data: map[string]string{"v": "1", "w": "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.waitFinal(t, map[string]string{ns + "/p": "1"})
	cm.Labels = map[string]string{"round": "1"} // neither watch's change
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm.Data["w"] = "b" // the second watch's change only
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Seen before the next update, which the controller's queue could
	// otherwise fold into this one.
	controlplanetest.Eventually(t, time.Minute, "the w change in the loop", func() bool {
		return len(changesOf(rec)) >= 2
	})
	cm.Data["v"] = "2" // the first watch's change only
	if _, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.waitFinal(t, map[string]string{ns + "/p": "2"})
	changes := changesOf(rec)
	// The w change arrives as a change whose v is still 1; the label
	// change is held back, so there are three changes, not four.
	want := []seen{{key: ns + "/p", prev: "-", next: "1"}, {key: ns + "/p", prev: "1", next: "1"},
		{key: ns + "/p", prev: "1", next: "2"}}
	if fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Fatalf("changes %+v, want the creation, the w change and the v change %+v", changes, want)
	}
}

// changesOf returns the changes rec saw, without the resyncs.
func changesOf(rec *recorder) []seen {
	var changes []seen
	for _, e := range rec.snapshot() {
		if !e.resync {
			changes = append(changes, e)
		}
	}
	return changes
}
