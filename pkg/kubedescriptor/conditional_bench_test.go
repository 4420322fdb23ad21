package kubedescriptor_test

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// BenchmarkUpdate measures a descriptor's Update of one ConfigMap and the
// requests it sends (requests/op): steady, the object as the descriptor's
// last apply left it; outside, changed by another writer before each
// update (the apply conditional on the last known version conflicts, and
// the object is read again).
func BenchmarkUpdate(b *testing.B) {
	for _, outside := range []bool{false, true} {
		name := "steady"
		if outside {
			name = "outside"
		}
		b.Run(name, func(b *testing.B) {
			ctx := b.Context()
			ns := controlplanetest.Namespace(b, cp.Config())
			kube := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
			var requests atomic.Int64
			cfg := rest.CopyConfig(cp.Config())
			cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
				return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
					requests.Add(1)
					return next.RoundTrip(r)
				})
			})
			clients, err := client.NewSharedClientFactory(cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			d, err := kubedescriptor.New(configMapKind, kubedescriptor.Options{Clients: clients, FieldManager: fieldManager, Namespace: ns})
			if err != nil {
				b.Fatal(err)
			}
			value := func(i int) *corev1.ConfigMap {
				return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns}, Data: map[string]string{"i": strconv.Itoa(i)}}
			}
			key := kubedescriptor.KeyFor(configMapKind, ns, "bench")
			md, err := d.Create(ctx, key, value(0))
			if err != nil {
				b.Fatal(err)
			}
			var sent int64
			b.ResetTimer()
			for i := range b.N {
				if outside {
					b.StopTimer()
					cm, err := kube.Get(ctx, "bench", metav1.GetOptions{})
					if err != nil {
						b.Fatal(err)
					}
					metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "outside", strconv.Itoa(i))
					if _, err := kube.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				before := requests.Load()
				if md, err = d.Update(ctx, key, value(i), value(i+1), md); err != nil {
					b.Fatal(err)
				}
				sent += requests.Load() - before
			}
			b.ReportMetric(float64(sent)/float64(b.N), "requests/op")
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
