package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"

	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// Manager runs named callbacks while its replica leads: wrangler's leader
// manager, returning errors instead of exiting. Register callbacks with
// OnLeader before Run.
type Manager struct {
	elector *Elector

	mu        sync.Mutex
	callbacks []callback
}

type callback struct {
	name string
	fn   func(context.Context) error
}

// NewManager returns a Manager competing for the Lease namespace/name (see
// New for leases and opts).
func NewManager(leases coordinationv1client.LeasesGetter, namespace, name string, opts ...Option) (*Manager, error) {
	e, err := New(leases, namespace, name, opts...)
	if err != nil {
		return nil, err
	}
	return &Manager{elector: e}, nil
}

// Elector returns the Manager's Elector, for Fence, Leader and Holding.
func (m *Manager) Elector() *Elector { return m.elector }

// OnLeader registers fn to run, under name, each time this replica starts
// leading. Callbacks run concurrently, each with the term's context; one
// may start its work and return nil, or block until the context ends. A
// callback that starts a factory must block until the factory's work has
// stopped (return f.Run(ctx, workers)): the lease is released once every
// callback returned, and work started by one that returned early is not
// waited for.
// Callbacks registered while a term runs join from the next term on.
func (m *Manager) OnLeader(name string, fn func(ctx context.Context) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.callbacks = append(m.callbacks, callback{name: name, fn: fn})
}

// Run competes for the lease until ctx ends, running the callbacks in each
// term (see Elector.Run). A callback's error ends the term, the other
// callbacks' contexts with it, and is returned, named.
func (m *Manager) Run(ctx context.Context) error {
	return m.elector.Run(ctx, m.runCallbacks)
}

func (m *Manager) runCallbacks(ctx context.Context) error {
	m.mu.Lock()
	cbs := append([]callback(nil), m.callbacks...)
	m.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		mu    sync.Mutex
		still []error // callbacks whose work outlived its stop grace
	)
	for _, cb := range cbs {
		wg.Go(func() {
			err := cb.fn(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				once.Do(func() {
					first = fmt.Errorf("leader: callback %q: %w", cb.name, err)
					cancel(first)
				})
			case errors.Is(err, controller.ErrStillRunning):
				mu.Lock()
				still = append(still, fmt.Errorf("leader: callback %q: %w", cb.name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first != nil || len(still) > 0 {
		// A callback's work still running keeps the lease (see Run).
		return errors.Join(append([]error{first}, still...)...)
	}
	// Callbacks that started work and returned keep the term until it ends.
	<-ctx.Done()
	return nil
}
