package leader_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestEveryDelayedWriteOfAHandledObjectConflicts: a write that a handler
// sends through the fence, of the object it handles, sits in the network;
// meanwhile someone else writes the object (the next leader, or the
// sharder moving it); then the write reaches the API server. Whatever the
// write (merge, JSON, strategic or apply patch, update, update of the
// status subresource, delete) and whatever the wire format Lariat's
// clients chose for the kind (protobuf for built-in kinds, JSON with
// JSONOnly), it must fail with a conflict, not land over the other write.
//
// The network is a transport under the fence that keeps the request as
// the fence sent it and fails it; the test replays the kept request
// verbatim once the object was written by another client, as a connection
// that stalled and resumed delivers it.
func TestEveryDelayedWriteOfAHandledObjectConflicts(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	e := leadingA(t, ns)

	for _, jsonOnly := range []bool{false, true} {
		wire := map[bool]string{false: "protobuf", true: "JSON"}[jsonOnly]
		net := &keptWrites{}
		clients, err := client.NewSharedClientFactory(e.Fence(net.wrap(cp.Config())), &client.SharedClientFactoryOptions{JSONOnly: jsonOnly})
		if err != nil {
			t.Fatal(err)
		}
		cms, err := generic.NewClient[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, clients)
		if err != nil {
			t.Fatal(err)
		}
		deps, err := generic.NewClient[*appsv1.Deployment, *appsv1.DeploymentList](appsv1.SchemeGroupVersion.WithKind("Deployment"), "deployments", true, clients)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range delayedWrites(cms, deps) {
			t.Run(wire+"/"+w.name, func(t *testing.T) {
				name := w.resource[:1] + "-" + map[bool]string{false: "pb", true: "js"}[jsonOnly] + "-" + w.name
				current := w.create(t, ns, name)
				ref := controller.ObjectRef{Group: w.group, Resource: w.resource, Namespace: ns, Name: name}
				passDone := e.PassTracker().Handling(ref, current.GetResourceVersion())
				err := w.write(t.Context(), current)
				passDone()
				kept := net.take()
				if kept == nil {
					t.Fatalf("the write did not reach the network: %v", err)
				}
				w.touch(t, ns, name) // another writer, while the write sits in the network
				if status := kept.replay(t); status != http.StatusConflict {
					t.Errorf("the delayed %s %s reached the API server after another write and got %d, want %d (a conflict): body %q",
						kept.method, kept.url, status, http.StatusConflict, kept.body)
				}
			})
		}
	}
}

// delayedWrite is one kind of write a handler makes of the object it
// handles.
type delayedWrite struct {
	name, group, resource string
	create                func(t *testing.T, ns, name string) metav1.Object
	write                 func(ctx context.Context, current metav1.Object) error
	touch                 func(t *testing.T, ns, name string)
}

func delayedWrites(cms *generic.Client[*corev1.ConfigMap, *corev1.ConfigMapList], deps *generic.Client[*appsv1.Deployment, *appsv1.DeploymentList]) []delayedWrite {
	cm := func(f func(ctx context.Context, cm *corev1.ConfigMap) error) func(context.Context, metav1.Object) error {
		return func(ctx context.Context, o metav1.Object) error { return f(ctx, o.(*corev1.ConfigMap).DeepCopy()) }
	}
	patch := func(pt types.PatchType, data string) func(context.Context, metav1.Object) error {
		return cm(func(ctx context.Context, c *corev1.ConfigMap) error {
			_, err := cms.Patch(ctx, c.Namespace, c.Name, pt, []byte(data))
			return err
		})
	}
	ws := []delayedWrite{
		{name: "merge-patch", write: patch(types.MergePatchType, `{"data":{"w":"a"}}`)},
		{name: "strategic-merge-patch", write: patch(types.StrategicMergePatchType, `{"data":{"w":"a"}}`)},
		{name: "json-patch", write: patch(types.JSONPatchType, `[{"op":"add","path":"/data/w","value":"a"}]`)},
		{name: "apply-patch", write: cm(func(ctx context.Context, c *corev1.ConfigMap) error {
			_, err := cms.Apply(ctx, corev1ac.ConfigMap(c.Name, c.Namespace).WithData(map[string]string{"w": "a"}), metav1.ApplyOptions{FieldManager: "handler"})
			return err
		})},
		{name: "update", write: cm(func(ctx context.Context, c *corev1.ConfigMap) error {
			c.Data = map[string]string{"w": "a"}
			_, err := cms.Update(ctx, c)
			return err
		})},
		{name: "update-without-version", write: cm(func(ctx context.Context, c *corev1.ConfigMap) error {
			// A handler that writes the whole object it wants, built
			// afresh.
			_, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}, Data: map[string]string{"w": "a"}})
			return err
		})},
		{name: "delete", write: cm(func(ctx context.Context, c *corev1.ConfigMap) error {
			return cms.Delete(ctx, c.Namespace, c.Name, metav1.DeleteOptions{})
		})},
	}
	for i := range ws {
		ws[i].resource, ws[i].create, ws[i].touch = "configmaps", createConfigMap, touchConfigMap
	}
	status := func(name string, f func(ctx context.Context, d *appsv1.Deployment) error) delayedWrite {
		return delayedWrite{name: name, group: "apps", resource: "deployments", create: createDeployment, touch: touchDeployment,
			write: func(ctx context.Context, o metav1.Object) error { return f(ctx, o.(*appsv1.Deployment).DeepCopy()) }}
	}
	return append(ws,
		status("status-update", func(ctx context.Context, d *appsv1.Deployment) error {
			d.Status.ObservedGeneration = 7
			_, err := deps.UpdateStatus(ctx, d)
			return err
		}),
		status("status-merge-patch", func(ctx context.Context, d *appsv1.Deployment) error {
			_, err := deps.Patch(ctx, d.Namespace, d.Name, types.MergePatchType, []byte(`{"status":{"observedGeneration":7}}`), "status")
			return err
		}),
	)
}

func createConfigMap(t *testing.T, ns, name string) metav1.Object {
	t.Helper()
	cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"w": ""}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

func touchConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	if _, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Patch(t.Context(), name, types.MergePatchType,
		[]byte(`{"data":{"other":"b"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createDeployment(t *testing.T, ns, name string) metav1.Object {
	t.Helper()
	labels := map[string]string{"app": name}
	d, err := controlplanetest.Clientset(cp.Config()).AppsV1().Deployments(ns).Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none"}}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func touchDeployment(t *testing.T, ns, name string) {
	t.Helper()
	if _, err := controlplanetest.Clientset(cp.Config()).AppsV1().Deployments(ns).Patch(t.Context(), name, types.MergePatchType,
		[]byte(`{"status":{"observedGeneration":3}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

// keptWrites is a network that keeps the writes sent through it and fails
// them, as a stalled connection does, for the test to deliver later.
type keptWrites struct {
	mu   sync.Mutex
	kept *keptRequest
}

// keptRequest is a request as it went out.
type keptRequest struct {
	method, url string
	header      http.Header
	body        []byte
}

func (k *keptWrites) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet {
				return next.RoundTrip(req)
			}
			var body []byte
			if req.Body != nil {
				b, err := io.ReadAll(req.Body)
				_ = req.Body.Close()
				if err != nil {
					return nil, err
				}
				body = b
			}
			k.mu.Lock()
			k.kept = &keptRequest{method: req.Method, url: req.URL.String(), header: req.Header.Clone(), body: body}
			k.mu.Unlock()
			return nil, errors.New("the network holds the request")
		})
	})
	return c
}

func (k *keptWrites) take() *keptRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	r := k.kept
	k.kept = nil
	return r
}

// replay delivers the kept request to the API server, as it went out, and
// returns the status of the answer.
func (r *keptRequest) replay(t *testing.T) int {
	t.Helper()
	rt, err := rest.TransportFor(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = r.header.Clone()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// leadingA returns an Elector "a" that leads the Lease "lease" in ns for
// the rest of the test (its term does nothing but wait).
func leadingA(t *testing.T, ns string) *leader.Elector {
	t.Helper()
	e, err := leader.New(controlplanetest.Clientset(cp.Config()).CoordinationV1(), ns, "lease",
		leader.WithIdentity("a"), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, func(ctx context.Context) error { <-ctx.Done(); return nil }) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	eventually(t, "a leading", e.Holding)
	return e
}
