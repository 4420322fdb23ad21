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
// again, and the factory starts again. The function returns only once the
// factory's work has stopped (every handler returned), so the lease is
// released only then.
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
		fmt.Println("leading")
		cancel() // the example ends here; an operator waits for SIGTERM
		// Start the factory, wait for ctx to end, and return once every
		// handler has returned.
		return f.Run(ctx, 2)
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
	f, err := generic.NewFactoryFromConfig(e.Fence(cfg), nil, e.FactoryOptions(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = e.Run(ctx, func(ctx context.Context) error {
		fmt.Println("leading as", e.Leader() == e.Identity())
		cancel()
		return f.Run(ctx, 2)
	})
	fmt.Println(err)
	// Output:
	// leading as true
	// <nil>
}

// wrangler's leader manager, ported: Run returns errors instead of exiting.
// A callback that runs a factory blocks in its Run, so that the lease is
// released only once the factory's handlers have returned.
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
	f, err := generic.NewFactoryFromConfig(cfg, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	m.OnLeader("controllers", func(ctx context.Context) error {
		fmt.Println("starting the controllers")
		return f.Run(ctx, 2) // until ctx ends and every handler returned
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
