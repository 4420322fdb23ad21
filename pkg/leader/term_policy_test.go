package leader_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// installTermPolicy installs the term fence of the Lease ns/lease and
// waits until the API server enforces it (a create stamped with a term the
// Lease never had is refused).
func installTermPolicy(t *testing.T, ns, lease string) {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	adm := kube.AdmissionregistrationV1()
	if err := leader.InstallTermPolicy(t.Context(), adm, ns, lease); err != nil {
		t.Fatal(err)
	}
	// The binding stays when the test ends (its namespace and Lease go):
	// kube-apiserver stops its Lease informer for admission once no
	// binding with a Lease parameter is left, and never starts it again
	// (docs/replicas.md); a stale binding refuses only stamps of its own,
	// gone, Lease.
	probe := stampedCM("probe", ns+"/"+lease+"/nobody/none", ns, lease)
	eventually(t, "the term policy of "+lease+" in force", func() bool {
		_, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && !leader.IsTermRefused(err) {
			t.Fatal(err)
		}
		return err != nil
	})
}

// stampedCM is a ConfigMap stamped as the fence stamps a create of the
// term token (as currentTerm names it) of the Lease named lease, naming no
// user (so judged whoever sends it).
func stampedCM(name, token, ns, lease string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{leader.TermLeaseLabel: leader.TermLeaseLabelValue(ns, lease), leader.TermIDLabel: termID(token)},
	}}
}

// termID is the term ID of a term as currentTerm names it.
func termID(term string) string {
	return term[strings.LastIndex(term, "/")+1:]
}

// dryRunStamped dry-runs the create of a ConfigMap stamped with token, a
// term of the Lease ns/"lease", and returns the API server's answer.
func dryRunStamped(ctx context.Context, ns, token string) error {
	_, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Create(ctx,
		stampedCM("dry-run", token, ns, "lease"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// waitAdmitted waits until the API server admits creates stamped with
// token: its admission reads the Lease from an informer of its own, which
// trails the Lease's writes (on a loaded machine, by a second and more).
func waitAdmitted(t *testing.T, ctx context.Context, ns, token string) {
	t.Helper()
	controlplanetest.Eventually(t, timeout, "the API server admitting term "+token, func() bool {
		return dryRunStamped(ctx, ns, token) == nil
	})
}

// waitRefused waits until the API server refuses a create stamped with
// term token: its view of the Lease has the term ended.
func waitRefused(t *testing.T, ns, token string) {
	t.Helper()
	controlplanetest.Eventually(t, timeout, "the API server refusing term "+token, func() bool {
		return dryRunStamped(t.Context(), ns, token) != nil
	})
}

// inTerm runs fn, on the test's goroutine, with the work context of a
// term of e, then ends Run and returns once it has returned (the lease
// released).
func inTerm(t *testing.T, e *leader.Elector, fn func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	leading := make(chan context.Context, 1)
	done := make(chan error, 1)
	go func() {
		done <- e.Run(ctx, func(work context.Context) error {
			select {
			case leading <- work:
			default: // a later term of this Run: fn ran already
			}
			<-work.Done()
			return nil
		})
	}()
	select {
	case work := <-leading:
		fn(work)
	case err := <-done:
		t.Fatalf("Run returned before leading: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// currentTerm names the term the Lease ns/"lease" is in as
// "ns/lease/holder/term ID" (termID is its stamp).
func currentTerm(t *testing.T, ns string) string {
	t.Helper()
	l, err := controlplanetest.Clientset(cp.Config()).CoordinationV1().Leases(ns).Get(t.Context(), "lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return ns + "/lease/" + holder + "/" + l.Labels[leader.TermIDLabel]
}

// TestCreateOfTheCurrentTermPasses: creates through the fence, as JSON and
// as protobuf, are stamped with the term they were sent in and admitted;
// the stamp names the Lease's holder and its current term ID.
func TestCreateOfTheCurrentTermPasses(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	fenced := e.Fence(cp.Config())
	pb := rest.CopyConfig(fenced)
	pb.ContentType = "application/vnd.kubernetes.protobuf"
	var errs []error
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		for name, cfg := range map[string]*rest.Config{"json": fenced, "protobuf": pb} {
			_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"mine": "kept"}},
				Data:       map[string]string{"k": "v"},
			}, metav1.CreateOptions{})
			errs = append(errs, err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("creates of the current term refused: %v", err)
	}
	if !strings.HasPrefix(term, ns+"/lease/a/") || strings.HasSuffix(term, "/") {
		t.Fatalf("the Lease's term while a led is %q, want %s/lease/a/<term ID>", term, ns)
	}
	for _, name := range []string{"json", "protobuf"} {
		cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := cm.Labels[leader.TermIDLabel]; got != termID(term) {
			t.Errorf("%s: stamped %q, want the term it was sent in, %q", name, got, term)
		}
		if cm.Labels[leader.TermUserLabel] == "" || len(cm.Annotations) > 0 {
			t.Errorf("%s: labels %v, annotations %v: want the sender's label, and no annotation", name, cm.Labels, cm.Annotations)
		}
		if cm.Labels[leader.TermLeaseLabel] != ns+".lease" || cm.Labels["mine"] != "kept" || cm.Data["k"] != "v" {
			t.Errorf("%s: labels %v, data %v: want the lease label beside the object's own, data kept", name, cm.Labels, cm.Data)
		}
	}
}

// TestCreateStampedWithAnOlderTermIsRefused: a create stamped with an
// earlier term of the same holder is refused once the Lease is in a newer
// term, with an error that says which term and which Lease; the newer
// term's own creates pass.
func TestCreateStampedWithAnOlderTermIsRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	kube := controlplanetest.Clientset(cp.Config())
	var first, second string
	inTerm(t, e, func(context.Context) { first = currentTerm(t, ns) })
	inTerm(t, e, func(ctx context.Context) {
		second = currentTerm(t, ns)
		// The API server has seen the second term: the first is over
		// for it too.
		waitAdmitted(t, ctx, ns, second)
		_, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, stampedCM("stale", first, ns, "lease"), metav1.CreateOptions{})
		switch {
		case err == nil:
			t.Errorf("a create stamped with the ended term %s was admitted in term %s", first, second)
		case !apierrors.IsForbidden(err) || !leader.IsTermRefused(err):
			t.Errorf("refused with %v, want Forbidden by the term policy", err)
		case !strings.Contains(err.Error(), "create sent in term "+termID(first)+" refused: the term is over, the Lease "+ns+"/lease is in term "+termID(second)+" of a"):
			t.Errorf("the refusal does not say which term and Lease: %v", err)
		}
		_, err = kubernetes.NewForConfigOrDie(e.Fence(cp.Config())).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "current"}}, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("the current term's create: %v", err)
		}
	})
	if first == second {
		t.Fatalf("two terms of one holder share the stamp %q", first)
	}
	// Released: no holder; once the API server has seen the release, the
	// last term's stamp is refused too.
	eventually(t, "the last term refused after the release", func() bool {
		err := dryRunStamped(t.Context(), ns, second)
		if err != nil && !leader.IsTermRefused(err) {
			t.Fatal(err)
		}
		return err != nil
	})
}

// TestObjectsWithoutTheStampAreUntouched: with the policy bound to a Lease
// that does not exist, a create stamped with that Lease is refused (a
// missing Lease refuses, it never allows), while objects without the
// stamp, or with the annotation but not the label, are created as ever.
func TestObjectsWithoutTheStampAreUntouched(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "absent")
	cms := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a create without the stamp: %v", err)
	}
	annotated := stampedCM("annotated", ns+"/absent/a/x", ns, "absent")
	annotated.Labels = nil
	if _, err := cms.Create(t.Context(), annotated, metav1.CreateOptions{}); err != nil {
		t.Errorf("a create with the annotation but not the label: %v", err)
	}
	if _, err := cms.Create(t.Context(), stampedCM("stamped", ns+"/absent/a/x", ns, "absent"), metav1.CreateOptions{}); !leader.IsTermRefused(err) {
		t.Errorf("a create stamped with a Lease that does not exist: %v, want refused by the term policy", err)
	}
}

// TestMissingTermPolicyIsReportedByName: CheckTermPolicy names the policy
// and the binding that are missing, Run with WithTermPolicyCheck logs them
// in a warning, and once installed the check passes. On an API server of
// its own, where nothing was ever installed: deleting the shared policy
// would stop the Lease informer of the package's API server for good.
func TestMissingTermPolicyIsReportedByName(t *testing.T) {
	own := controlplanetest.Start(t, controlplane.Options{})
	ns := controlplanetest.Namespace(t, own.Config())
	kube := controlplanetest.Clientset(own.Config())
	adm := kube.AdmissionregistrationV1()
	binding := leader.TermPolicyBindingName(ns, "lease")
	wantMissing := []string{"ValidatingAdmissionPolicy " + leader.TermPolicyName, "ValidatingAdmissionPolicyBinding " + binding}
	var tpe *leader.TermPolicyError
	err := leader.CheckTermPolicy(t.Context(), adm, ns, "lease")
	if !errors.As(err, &tpe) || strings.Join(tpe.Missing, ";") != strings.Join(wantMissing, ";") {
		t.Fatalf("CheckTermPolicy with nothing installed: %v, want a *TermPolicyError naming %v", err, wantMissing)
	}

	log, hook := logtest.NewNullLogger()
	e, err := leader.New(kube.CoordinationV1(), ns, "lease", leader.WithIdentity("a"), leader.WithLeaseDuration(leaseDuration),
		leader.WithRenewDeadline(renewDeadline), leader.WithRetryPeriod(retryPeriod), leader.WithLogger(log), leader.WithTermPolicyCheck(adm))
	if err != nil {
		t.Fatal(err)
	}
	warned := func() bool {
		for _, entry := range hook.AllEntries() {
			if entry.Level == logrus.WarnLevel && entry.Data["missing"] == strings.Join(wantMissing, ", ") && strings.Contains(entry.Message, binding) {
				return true
			}
		}
		return false
	}
	// The check runs beside the campaign: the term lasts until it warned
	// (a term ended first cuts the check short, which is no finding).
	inTerm(t, e, func(context.Context) {
		controlplanetest.Eventually(t, time.Minute, "Run's warning naming what is missing", warned)
	})
	if !warned() {
		t.Errorf("Run logged no warning naming %v; entries: %v", wantMissing, hook.AllEntries())
	}

	if err := leader.InstallTermPolicy(t.Context(), adm, ns, "lease"); err != nil {
		t.Fatal(err)
	}
	if err := leader.CheckTermPolicy(t.Context(), adm, ns, "lease"); err != nil {
		t.Errorf("CheckTermPolicy once installed: %v", err)
	}
	// A binding that does not deny when its Lease is missing is named too.
	b, err := adm.ValidatingAdmissionPolicyBindings().Get(t.Context(), binding, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	allow := admissionv1.AllowAction
	b.Spec.ParamRef.ParameterNotFoundAction = &allow
	if _, err := adm.ValidatingAdmissionPolicyBindings().Update(t.Context(), b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := leader.CheckTermPolicy(t.Context(), adm, ns, "lease"); !errors.As(err, &tpe) || len(tpe.Missing) != 1 || !strings.Contains(tpe.Missing[0], binding) {
		t.Errorf("CheckTermPolicy with a binding that allows a missing Lease: %v", err)
	}
}
