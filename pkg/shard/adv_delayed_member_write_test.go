package shard_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestAdvMembersDelayedWritesConflictAfterTheMove: a member's handler
// writes the object it holds (delete, update of an object built afresh,
// merge and JSON patch), through the member's fence and with its factory
// options, as Lariat's clients send it (protobuf for ConfigMaps); the
// network holds the write; the sharder moves the object (a label patch);
// then the network delivers the write. It must fail with a conflict: a
// delete must not remove, and an update or patch not overwrite, an object
// that has moved to another member. Before the fence set preconditions in
// protobuf bodies, the delayed delete and update landed (200).
func TestAdvMembersDelayedWritesConflictAfterTheMove(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	ring := testRing(ns)
	net := &heldWrites{kept: map[string]*heldRequest{}}
	ops := map[string]func(ctx context.Context, cms *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList], cm *corev1.ConfigMap) error{
		"w-delete": func(ctx context.Context, cms *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList], cm *corev1.ConfigMap) error {
			return cms.Delete(ctx, cm.Namespace, cm.Name, metav1.DeleteOptions{})
		},
		"w-update": func(ctx context.Context, cms *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList], cm *corev1.ConfigMap) error {
			_, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name, Labels: cm.Labels}, Data: map[string]string{"w": "a"}})
			return err
		},
		"w-merge-patch": func(ctx context.Context, cms *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList], cm *corev1.ConfigMap) error {
			_, err := cms.Patch(ctx, cm.Namespace, cm.Name, types.MergePatchType, []byte(`{"data":{"w":"a"}}`))
			return err
		},
		"w-json-patch": func(ctx context.Context, cms *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList], cm *corev1.ConfigMap) error {
			_, err := cms.Patch(ctx, cm.Namespace, cm.Name, types.JSONPatchType, []byte(`[{"op":"add","path":"/data","value":{"w":"a"}}]`))
			return err
		},
	}
	var (
		idMu sync.Mutex
		id   string
		once sync.Map // names written once already
	)
	cfg := net.wrap(cp().Config())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- shard.Join(ctx, controlplanetest.Clientset(cp().Config()).CoordinationV1(), ring, func(ctx context.Context, m *shard.Member) error {
			f, err := generic.NewFactoryFromConfig(m.Fence(cfg), nil, m.FactoryOptions(cfg, &generic.FactoryOptions{
				Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
				Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
			}))
			if err != nil {
				return err
			}
			cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			cms.OnChange(ctx, "write", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				if cm == nil {
					return nil, nil
				}
				if _, again := once.LoadOrStore(cm.Name, true); again {
					return nil, nil
				}
				if op := ops[cm.Name]; op != nil {
					_ = op(context.Background(), cms, cm) // held by the network: fails
				}
				return nil, nil
			})
			idMu.Lock()
			id = m.ID()
			idMu.Unlock()
			return f.Run(ctx, 2)
		}, leader.WithIdentity("a"), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
			leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	eventually(t, "a's first term", func() bool {
		idMu.Lock()
		defer idMu.Unlock()
		return id != ""
	})
	idMu.Lock()
	assigned := id
	idMu.Unlock()
	for name := range ops {
		createCM(t, ns, name, assigned)
	}
	for name := range ops {
		t.Run(name, func(t *testing.T) {
			var kept *heldRequest
			eventually(t, "a's write of "+name+" held by the network", func() bool {
				kept = net.take(name)
				return kept != nil
			})
			label(t, ns, name, "another-member", false) // the sharder moves it
			if status := kept.deliver(t); status != http.StatusConflict {
				t.Errorf("a's %s of %s, held while the object moved, got %d when delivered, want %d (a conflict)", kept.method, name, status, http.StatusConflict)
			}
			cm, err := kubernetes.NewForConfigOrDie(cp().Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s after the delayed write: %v", name, err)
			}
			if cm.Data["w"] != "" || cm.Labels[shard.AssignmentLabel(ringName)] != "another-member" {
				t.Errorf("%s after the delayed write: data %v, labels %v", name, cm.Data, cm.Labels)
			}
		})
	}
}

// heldWrites is a network that holds the writes of ConfigMaps named w-*
// and fails them, as a stalled connection does, for the test to deliver
// later; other requests go through.
type heldWrites struct {
	mu   sync.Mutex
	kept map[string]*heldRequest
}

// heldRequest is a request as it went out.
type heldRequest struct {
	method, url string
	header      http.Header
	body        []byte
}

func (h *heldWrites) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			_, name, ok := strings.Cut(req.URL.Path, "/configmaps/")
			if req.Method == http.MethodGet || !ok || !strings.HasPrefix(name, "w-") {
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
			h.mu.Lock()
			h.kept[name] = &heldRequest{method: req.Method, url: req.URL.String(), header: req.Header.Clone(), body: body}
			h.mu.Unlock()
			return nil, errors.New("the network holds the request")
		})
	})
	return c
}

func (h *heldWrites) take(name string) *heldRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.kept[name]
	delete(h.kept, name)
	return r
}

// deliver sends the held request to the API server as it went out, and
// returns the status of the answer.
func (r *heldRequest) deliver(t *testing.T) int {
	t.Helper()
	rt, err := rest.TransportFor(cp().Config())
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), r.method, r.url, bytes.NewReader(r.body))
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

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
