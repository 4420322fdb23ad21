// Command quickstart is the smallest useful Lariat operator: for every
// Greeting it keeps a ConfigMap holding the message, and reports in the
// Greeting's status which ConfigMap that is and whether it is Ready.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	v1 "github.com/lariat-dev/lariat/examples/quickstart/api/v1"
	"github.com/lariat-dev/lariat/examples/quickstart/generated/controllers/quickstart.lariat.dev"
	greetingctl "github.com/lariat-dev/lariat/examples/quickstart/generated/controllers/quickstart.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubeconfig"
	"github.com/lariat-dev/lariat/pkg/signals"
)

// applied reports the ConfigMap's last apply; Ready summarises the Greeting.
const applied, ready = condition.Cond("ConfigMapApplied"), condition.Cond("Ready")

func main() {
	path := flag.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	flag.Parse()
	// Ctrl-C (or a pod's SIGTERM) ends ctx, which stops every handler; a
	// second Ctrl-C exits at once.
	ctx, stop := signals.Context(context.Background())
	defer stop()
	cfg, err := kubeconfig.Load(*path)
	if err != nil {
		logrus.Fatal(err)
	}
	f, err := generic.NewFactoryFromConfig(cfg, nil, nil)
	if err == nil {
		err = register(ctx, f)
	}
	if err == nil {
		err = f.Start(ctx, 2) // 2 workers; returns once the caches are synced
	}
	if err != nil {
		logrus.Fatal(err)
	}
	<-ctx.Done()
}

// register adds the operator's handlers to f, to run from f.Start until ctx
// ends. Call it before f's scheme is sealed: it adds the quickstart group.
func register(ctx context.Context, f *generic.Factory) error {
	qs, err := quickstart.NewFactory(f)
	if err != nil {
		return err
	}
	greetings, err := qs.Quickstart().V1().Greeting()
	if err != nil {
		return err
	}
	// Sharing the factory's clients keeps one connection pool and scheme.
	applier, err := apply.New(f.ControllerFactory().SharedCacheFactory().SharedClientFactory(), apply.Options{FieldManager: "quickstart"})
	if err != nil {
		return err
	}
	greetings.OnChange(ctx, "log", func(key string, g *v1.Greeting) (*v1.Greeting, error) {
		if g == nil {
			logrus.Infof("greeting %s deleted", key)
		} else {
			logrus.Infof("greeting %s: %q (generation %d)", key, g.Spec.Message, g.Generation)
		}
		return nil, nil // nil: the handler changed nothing
	})

	// The handler only says what should exist; the applier creates and
	// updates it, deletes it with the Greeting, and sets applied.
	greetingctl.RegisterGreetingGeneratingHandler(ctx, greetings, applier, applied, "configmap",
		func(g *v1.Greeting, status v1.GreetingStatus) ([]runtime.Object, v1.GreetingStatus, error) {
			status.ConfigMap = g.Name + "-greeting"
			return []runtime.Object{&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: status.ConfigMap, Namespace: g.Namespace},
				Data:       map[string]string{"message": g.Spec.Message, "replicas": fmt.Sprint(ptr.Deref(g.Spec.Replicas, 1))},
			}}, status, nil
		}, nil)
	greetingctl.RegisterGreetingStatusHandler(ctx, greetings, ready, "ready",
		func(_ *v1.Greeting, status v1.GreetingStatus) (v1.GreetingStatus, error) {
			if !applied.IsTrue(status.Conditions) {
				// Expected until the first apply: retried without error logs.
				return status, controller.RetryQuietly(fmt.Errorf("ConfigMap not applied: %s", applied.Message(status.Conditions)))
			}
			return status, nil
		})
	return nil
}
