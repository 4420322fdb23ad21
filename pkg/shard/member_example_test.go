package shard_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// Shard a kind over the replicas of an operator: each replica joins the
// ring, and for each term of its membership builds a factory with
// FactoryOptions from the fenced config, which caches and handles only the
// objects assigned to that term's member. A term ends when ctx ends or the
// membership is lost; Join then starts the next term under a new ID, with
// a new factory (the old one's selector names a dead ID). (The ring's
// sharder assigns the objects; here the example labels two ConfigMaps
// itself, one for this member and one for another.)
func ExampleJoin() {
	cfg := cp().Config()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}

	configMaps := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	ring := shard.Ring{Name: "example", Namespace: "default", Kinds: []shard.Kind{{GVK: configMaps}}}
	opts := &generic.FactoryOptions{Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: "default"}}}
	err = shard.Join(ctx, kube.CoordinationV1(), ring, func(ctx context.Context, m *shard.Member) error {
		f, err := generic.NewFactoryFromConfig(m.Fence(cfg), nil, m.FactoryOptions(cfg, opts))
		if err != nil {
			return err
		}
		cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMaps, "configmaps", true, f.ControllerFactory())
		if err != nil {
			return err
		}
		cms.OnChange(ctx, "print", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			if cm != nil {
				fmt.Println("handling", cm.Name)
				cancel() // the example ends here; an operator waits for SIGTERM
			}
			return cm, nil
		})

		// The sharder's part, for the example.
		for name, id := range map[string]string{"example-other": shard.MemberID("another-replica"), "example-mine": m.ID()} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{shard.AssignmentLabel(ring.Name): id}}}
			if _, err := kube.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				return err
			}
			defer kube.CoreV1().ConfigMaps("default").Delete(context.Background(), name, metav1.DeleteOptions{})
		}

		// Run returns once the term's context ended and every handler
		// of the term returned: only then is the member Lease given up.
		return f.Run(ctx, 2)
	})
	fmt.Println(err)
	// Output:
	// handling example-mine
	// <nil>
}
