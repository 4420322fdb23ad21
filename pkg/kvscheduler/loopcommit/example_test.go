package loopcommit_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

// network desires a default route from the start, and a link once an event
// reports it. It does not order them: the scheduler does.
type network struct{ links []string }

func (n *network) String() string                    { return "network" }
func (n *network) HandlesEvent(eventloop.Event) bool { return true }
func (n *network) Revert(eventloop.Event) error      { return nil }

func (n *network) Resync(_ eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
	txn.Put("route/default", "eth0")
	for _, l := range n.links {
		txn.Put("link/"+l, "up")
	}
	return nil
}

func (n *network) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	link := strings.TrimPrefix(ev.GetName(), "link up: ")
	n.links = append(n.links, link)
	txn.Put("link/"+link, "up")
	return "link " + link, nil
}

// Each event's transaction becomes one scheduler transaction: the route
// put by the startup resync waits as PENDING for its link, and is created
// right after the link, in the transaction of the event that brought it.
func ExampleNew() {
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	links := kvscheduler.TypedDescriptor[string]{
		Name:        "link",
		NBKeyPrefix: "link/",
		KeySelector: func(k string) bool { return strings.HasPrefix(k, "link/") },
		Create:      func(_ context.Context, key, _ string) (any, error) { fmt.Println("create", key); return nil, nil },
	}.Build()
	routes := kvscheduler.TypedDescriptor[string]{
		Name:        "route",
		NBKeyPrefix: "route/",
		KeySelector: func(k string) bool { return strings.HasPrefix(k, "route/") },
		Create: func(_ context.Context, key, via string) (any, error) {
			fmt.Println("create", key, "via", via)
			return nil, nil
		},
		Dependencies: func(_ string, via string) []kvscheduler.Dependency {
			return []kvscheduler.Dependency{{Key: "link/" + via}}
		},
	}.Build()
	for _, d := range []*kvscheduler.Descriptor{links, routes} {
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			fmt.Println(err)
			return
		}
	}

	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	loop, err := eventloop.New(eventloop.Options{
		Handlers:  []eventloop.EventHandler{&network{}},
		Committer: loopcommit.New(s),
		Logger:    logrus.NewEntry(quiet),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := loop.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	startup := eventlooptest.NewResync("startup")
	startup.Blocking = true
	linkUp := eventlooptest.NewUpdate("link up: eth0")
	linkUp.Blocking = true
	for _, ev := range []*eventlooptest.Event{startup, linkUp} {
		if err := loop.PushEvent(ev); err != nil {
			fmt.Println(err)
			return
		}
		if err := ev.Wait(ctx); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("after %q: route/default %s\n", ev.GetName(), s.GetValueStatus("route/default").State)
	}
	// Output:
	// after "startup": route/default PENDING
	// create link/eth0
	// create route/default via eth0
	// after "link up: eth0": route/default CONFIGURED
}
