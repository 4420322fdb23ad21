package kvscheduler_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

func Example() {
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	routes := kvscheduler.TypedDescriptor[string]{
		Name:        "route",
		NBKeyPrefix: "route/",
		KeySelector: func(k string) bool { return strings.HasPrefix(k, "route/") },
		// Callbacks that talk to the southbound get the context of the
		// transaction, and return when it ends.
		Create: func(_ context.Context, key, via string) (any, error) {
			fmt.Println("create", key, "via", via)
			return nil, nil
		},
		Delete: func(_ context.Context, key, _ string, _ any) error {
			fmt.Println("delete", key)
			return nil
		},
		Dependencies: func(_ string, via string) []kvscheduler.Dependency {
			return []kvscheduler.Dependency{{Key: "link/" + via}}
		},
	}.Build()
	if err := s.RegisterDescriptor(ctx, routes); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := s.StartNBTransaction().SetValue("route/default", "eth0").Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	st := s.GetValueStatus("route/default")
	fmt.Println(st.State, st.UnmetDependencies)
	// The southbound reports the link; the route is created right away.
	_ = s.PushSBNotification("link/eth0", "up", nil)
	_, _ = s.StartNBTransaction().Commit(ctx) // wait for the notification
	fmt.Println(s.GetValueStatus("route/default").State)
	// Output:
	// PENDING [link/eth0]
	// create route/default via eth0
	// CONFIGURED
}
