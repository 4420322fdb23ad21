package generic_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// sharedChild is a generating handler returning one ConfigMap, child,
// whose data names the handler.
func sharedChild(name string) generic.GeneratingHandler[*corev1.Service, corev1.ServiceStatus] {
	return func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
		return []runtime.Object{&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "child"},
			Data:       map[string]string{"from": name},
		}}, st, nil
	}
}

// Two generating handlers of one owner that both return the same child:
// the child stays with the handler that applied it first, with that
// handler's content; the other handler fails, its condition naming the
// holder, instead of overwriting the child and taking it into its own set
// (from where its pruning could delete it while the holder still wants it).
func TestGeneratingHandlersSharingAChildDoNotTakeItFromEachOther(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	applier := newApplier(t, cp.Config(), f)
	conds := map[string]condition.Cond{"first": "FirstGenerated", "second": "SecondGenerated"}
	for _, name := range []string{"first", "second"} {
		generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, conds[name], name, sharedChild(name), nil)
	}
	createService(t, ns, "owner", 80)
	start(t, f)

	var holder, refused string
	eventually(t, "one handler holds the child and the other is refused", func() bool {
		cm, err := kube().CoreV1().ConfigMaps(ns).Get(t.Context(), "child", metav1.GetOptions{})
		if err != nil {
			return false
		}
		holder = cm.Annotations[apply.AnnotationSetID]
		refused = map[string]string{"first": "second", "second": "first"}[holder]
		conditions := getService(t, ns, "owner").Status.Conditions
		c, held := conds[refused].Get(conditions), conds[holder].Get(conditions)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, `belongs to set "`+holder+`"`) &&
			held != nil && held.Status == metav1.ConditionTrue
	})
	cm, err := kube().CoreV1().ConfigMaps(ns).Get(t.Context(), "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["from"] != holder || cm.Annotations[apply.AnnotationSetID] != holder {
		t.Fatalf("the child of %s was overwritten by the refused handler %s: data %v, annotations %v", holder, refused, cm.Data, cm.Annotations)
	}
}

// A renamed generating handler whose SetOptions.TakeOver names its old
// name takes over the children the old handler applied.
func TestRenamedGeneratingHandlerTakesOverItsChildren(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	applier := newApplier(t, cp.Config(), f)
	createService(t, ns, "owner", 80)
	if err := applier.Apply(t.Context(), apply.Set{Owner: getService(t, ns, "owner"), ID: "old-name"},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child"}, Data: map[string]string{"from": "old-name"}}); err != nil {
		t.Fatal(err)
	}
	generic.RegisterGeneratingHandler(t.Context(), svcs, applier, serviceStatus, generated, "new-name", sharedChild("new-name"),
		&generic.GeneratingHandlerOptions{Set: generic.SetOptions{TakeOver: []string{"old-name"}}})
	start(t, f)
	eventually(t, "the renamed handler holds the child", func() bool {
		cm, err := kube().CoreV1().ConfigMaps(ns).Get(t.Context(), "child", metav1.GetOptions{})
		c := generated.Get(getService(t, ns, "owner").Status.Conditions)
		return err == nil && cm.Data["from"] == "new-name" && cm.Annotations[apply.AnnotationSetID] == "new-name" &&
			c != nil && c.Status == metav1.ConditionTrue
	})
}
