package signals_test

import (
	"context"
	"fmt"

	"github.com/lariat-dev/lariat/pkg/signals"
)

// An operator's main: everything it starts runs under ctx, which Ctrl-C
// or SIGTERM ends; a second Ctrl-C exits at once.
func ExampleContext() {
	ctx, stop := signals.Context(context.Background())
	defer stop()

	run := func(ctx context.Context) error {
		// Start the factory, the event loop, ... with ctx, then wait:
		// <-ctx.Done()
		return nil
	}
	if err := run(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println("running until a signal:", ctx.Err() == nil)
	// Output: running until a signal: true
}
