package leader_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv4CreateAtTheAnnotationLimitIsNotRefused: an input at its limit.
// The API server accepts annotations of up to 256 KiB in all (keys and
// values); the fence added its own (lariat.dev/term and a token of about
// a hundred bytes) to every create, so an object whose annotations are
// valid, at the limit, was refused as Invalid when the leader created it
// through the fence, in its current term, though the same create through
// no fence (the control) is accepted. (Fixed: the stamp is in labels.)
func TestAdv4CreateAtTheAnnotationLimitIsNotRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	e := newElector(t, ns, "a")
	const limit = 256 * 1024 // the API server's total size of annotations
	key := "example.com/blob"
	atLimit := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{key: strings.Repeat("x", limit-len(key))}}}
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	inTerm(t, e, func(ctx context.Context) {
		if _, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Create(ctx, atLimit("control"), dry); err != nil {
			t.Fatalf("the control, the create through no fence: %v", err)
		}
		fenced := kubernetes.NewForConfigOrDie(e.Fence(cp.Config())).CoreV1().ConfigMaps(ns)
		if _, err := fenced.Create(ctx, atLimit("fenced"), dry); err != nil {
			t.Errorf("the leader's create, at the annotation limit, through the fence in its current term: %.300v", err)
		}
	})
}
