package leader_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// Run a factory's controllers only while this replica leads. Losing the
// lease ends ctx of the function; winning it again calls the function
// again, and the factory starts again.
func ExampleRun() {
	cfg := cp.Config()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := generic.NewFactoryFromConfig(cfg, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	// ... register controllers and handlers on f ...
	err = leader.Run(ctx, kube.CoordinationV1(), "default", "example-operator", func(ctx context.Context) error {
		if err := f.Start(ctx, 2); err != nil {
			return err
		}
		fmt.Println("leading")
		cancel() // the example ends here; an operator waits for SIGTERM
		<-ctx.Done()
		return nil
	})
	fmt.Println("stopped, lease released:", err)
	// Output:
	// leading
	// stopped, lease released: <nil>
}

// Fence the work's writes: a handler still busy when the renew deadline
// passes cannot write, since every client built from the fenced config
// refuses writes once the lease is no longer held. The lease's own client
// is built from the unfenced config.
func ExampleElector_Fence() {
	cfg := cp.Config()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	e, err := leader.New(kube.CoordinationV1(), "default", "example-fenced")
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := generic.NewFactoryFromConfig(e.Fence(cfg), nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = e.Run(ctx, func(ctx context.Context) error {
		if err := f.Start(ctx, 2); err != nil {
			return err
		}
		fmt.Println("leading as", e.Leader() == e.Identity())
		cancel()
		<-ctx.Done()
		return nil
	})
	fmt.Println(err)
	// Output:
	// leading as true
	// <nil>
}

// wrangler's leader manager, ported: callbacks start their work and return
// (or block until ctx ends); Run returns errors instead of exiting.
func ExampleManager() {
	cfg := cp.Config()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := leader.NewManager(kube.CoordinationV1(), "default", "example-manager")
	if err != nil {
		fmt.Println(err)
		return
	}
	m.OnLeader("controllers", func(ctx context.Context) error {
		fmt.Println("starting the controllers")
		return nil // started; they stop when ctx ends
	})
	m.OnLeader("until-cancelled", func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return nil
	})
	fmt.Println(m.Run(ctx))
	// Output:
	// starting the controllers
	// <nil>
}
