package leader_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// zeroVersionWrites are a handler's writes of a ConfigMap that carry
// resourceVersion "0" (or "00"), which the API server reads as no version
// (an unconditional write), keyed by the ConfigMap's name; a JSON patch
// that removes the version is one too.
func zeroVersionWrites(ns string, jsonKube, protoKube kubernetes.Interface) map[string]func(context.Context, *corev1.ConfigMap) error {
	update := func(k kubernetes.Interface, rv string) func(context.Context, *corev1.ConfigMap) error {
		return func(ctx context.Context, cm *corev1.ConfigMap) error {
			w := cm.DeepCopy()
			w.ResourceVersion = rv
			w.Data = map[string]string{"by": "slow handler"}
			_, err := k.CoreV1().ConfigMaps(ns).Update(ctx, w, metav1.UpdateOptions{})
			return err
		}
	}
	patch := func(pt types.PatchType, body string, opts metav1.PatchOptions) func(context.Context, *corev1.ConfigMap) error {
		return func(ctx context.Context, cm *corev1.ConfigMap) error {
			_, err := jsonKube.CoreV1().ConfigMaps(ns).Patch(ctx, cm.Name, pt, []byte(body), opts)
			return err
		}
	}
	return map[string]func(context.Context, *corev1.ConfigMap) error{
		"json-update":   update(jsonKube, "0"),
		"json-update00": update(jsonKube, "00"),
		"proto-update":  update(protoKube, "0"),
		"merge-patch":   patch(types.MergePatchType, `{"metadata":{"resourceVersion":"0"},"data":{"by":"slow handler"}}`, metav1.PatchOptions{}),
		"strategic":     patch(types.StrategicMergePatchType, `{"metadata":{"resourceVersion":"0"},"data":{"by":"slow handler"}}`, metav1.PatchOptions{}),
		"json-patch": patch(types.JSONPatchType, `[{"op":"replace","path":"/metadata/resourceVersion","value":"0"},{"op":"add","path":"/data","value":{"by":"slow handler"}}]`,
			metav1.PatchOptions{}),
		"json-patch-removed": patch(types.JSONPatchType, `[{"op":"remove","path":"/metadata/resourceVersion"},{"op":"add","path":"/data","value":{"by":"slow handler"}}]`,
			metav1.PatchOptions{}),
		"apply": patch(types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"apply","resourceVersion":"0"},"data":{"by":"slow handler"}}`,
			metav1.PatchOptions{FieldManager: "slow-handler", Force: new(true)}),
	}
}

// TestHandledWriteWithVersionZeroKeepsItsPrecondition: a handled object's
// write that carries resourceVersion "0" carries no precondition to the
// API server (its versioner parses "0" to 0: an unconditional write). The
// fence read any non-empty resourceVersion as the write's own
// precondition and left it as it was: a handler given version 1, writing
// after someone else changed the object, overwrote their change. Each
// such write now goes out conditional on the copy the handler was given,
// and fails with a conflict.
func TestHandledWriteWithVersionZeroKeepsItsPrecondition(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ctx := t.Context()
	e, f, cms := newConfigMapHandler(t, ns)
	fenced := e.Fence(cfg)
	protoCfg := rest.CopyConfig(fenced)
	protoCfg.ContentType = "application/vnd.kubernetes.protobuf"
	writes := zeroVersionWrites(ns, kubernetes.NewForConfigOrDie(fenced), kubernetes.NewForConfigOrDie(protoCfg))
	given := make(chan *corev1.ConfigMap, len(writes))
	proceed := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-proceed:
		default:
			close(proceed)
		}
	})
	results := make(chan error, len(writes))
	handled := map[string]bool{} // by the handler only: one worker
	cms.OnChange(ctx, "slow-writer", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || handled[cm.Name] {
			return cm, nil
		}
		handled[cm.Name] = true
		given <- cm
		<-proceed
		write := writes[cm.Name]
		results <- write(context.WithoutCancel(ctx), cm)
		return cm, nil
	})
	controlplanetest.Run(t, func(ctx context.Context) error {
		return e.Run(ctx, func(ctx context.Context) error {
			if err := f.Start(ctx, 1); err != nil {
				return err
			}
			<-ctx.Done()
			return f.Wait(context.WithoutCancel(ctx))
		})
	})
	controlplanetest.Eventually(t, timeout, "A leads", e.Holding)

	for name := range writes {
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// One at a time: the handler (one worker) is given an object, someone
	// else changes it, then the handler writes it with version "0".
	for range writes {
		var cm *corev1.ConfigMap
		select {
		case cm = <-given:
		case <-time.After(timeout):
			t.Fatal("the handler was never given an object")
		}
		changed, err := kube.CoreV1().ConfigMaps(ns).Patch(ctx, cm.Name, types.MergePatchType, []byte(`{"data":{"by":"someone else"}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		proceed <- struct{}{}
		if err := <-results; !apierrors.IsConflict(err) {
			got, _ := kube.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{})
			t.Errorf("%s: the handler, given version %s, wrote with a resourceVersion the API server reads as none after the object changed to %s: %v, want a conflict; the object's data: %v",
				cm.Name, cm.ResourceVersion, changed.ResourceVersion, err, got.Data)
		}
	}
}

// newConfigMapHandler returns an Elector of ns and a factory built with its
// Fence and FactoryOptions, with a ConfigMap controller of ns.
func newConfigMapHandler(t *testing.T, ns string) (*leader.Elector, *generic.Factory, *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList]) {
	t.Helper()
	e, err := leader.New(controlplanetest.Clientset(cp.Config()).CoordinationV1(), ns, "zero-version", leader.WithIdentity("a"),
		leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline), leader.WithRetryPeriod(retryPeriod),
		leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	f, cms := fencedConfigMaps(t, e, e.Fence(cp.Config()), ns)
	return e, f, cms
}
