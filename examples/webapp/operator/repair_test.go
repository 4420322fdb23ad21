package operator_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestRepairsAreScopedToTheDamage deletes several Deployments behind the
// operator's back at once: each is repaired by a downstream resync scoped
// to its own key, in which the scheduler reads back that object only; no
// repair re-reads every object the operator manages. Before the fix, a
// Repair was a downstream resync of everything (one per deleted object),
// each re-reading and copying every cached object.
func TestRepairsAreScopedToTheDamage(t *testing.T) {
	const apps, damaged = 12, 5
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	op, _ := startOperator(t, operator.Options{Config: cp.Config(), Namespace: ns, Logger: log,
		NodePorts: operator.PortRange{First: 32500, Last: 32599}})
	for i := range apps {
		app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%02d", i), Namespace: ns},
			Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80}}
		if _, err := op.WebApps().Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	for i := range apps {
		if _, err := waitForReason(ctx, op.WebApps(), ns, fmt.Sprintf("app-%02d", i), operator.ReasonAvailable, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	sched := op.Scheduler()
	start := time.Now()
	old := map[string]string{}
	for i := range damaged {
		name := fmt.Sprintf("app-%02d", i)
		d, err := kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		old[name] = string(d.UID)
		if err := kube.AppsV1().Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, uid := range old {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			d, err := kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil && string(d.UID) != uid {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Deployment %s not restored (%v)", name, err)
			}
		}
	}
	var want []string
	for i := range damaged {
		want = append(want, operator.DeploymentKey(ns, fmt.Sprintf("app-%02d", i)))
	}
	// A repair's record is kept when its transaction ends, which may be just
	// after the API server has the restored Deployment.
	var repairs []*kvscheduler.TxnRecord
	controlplanetest.Eventually(t, time.Minute, "a recorded repair of each deleted Deployment", func() bool {
		repairs = repairs[:0]
		keys := map[string]bool{}
		for _, rec := range sched.TransactionHistory(start, time.Now().Add(time.Hour)) {
			if rec.Resync == kvscheduler.DownstreamResync {
				repairs = append(repairs, rec)
				for _, k := range rec.ResyncKeys {
					keys[k] = true
				}
			}
		}
		return len(keys) >= damaged
	})
	var repaired []string
	for _, rec := range repairs {
		if len(rec.ResyncKeys) != 1 {
			t.Errorf("transaction %d (%s) is a downstream resync of %d keys %v, want a repair of one object", rec.SeqNum, rec.Description, len(rec.ResyncKeys), rec.ResyncKeys)
			continue
		}
		for _, o := range rec.Executed {
			if o.Key != rec.ResyncKeys[0] {
				t.Errorf("the repair of %s executed %s %s", rec.ResyncKeys[0], o.Operation, o.Key)
			}
		}
		repaired = append(repaired, rec.ResyncKeys[0])
	}
	slices.Sort(repaired)
	if !slices.Equal(slices.Compact(repaired), want) {
		t.Errorf("repaired %v, want %v", repaired, want)
	}
}
