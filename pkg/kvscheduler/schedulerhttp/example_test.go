package schedulerhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

// The status endpoint answers "why is this value pending": a route waits
// for the link it goes through, and the answer names the link and its state.
func ExampleHandler() {
	ctx := context.Background()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	sb := kvtest.New() // an in-memory southbound; in an operator, real descriptors
	routes := sb.Descriptor("route", "route/")
	routes.Dependencies = func(_ string, via any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{{Key: fmt.Sprint("link/", via)}}
	}
	for _, d := range []*kvscheduler.Descriptor{sb.Descriptor("link", "link/"), routes} {
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			fmt.Println(err)
			return
		}
	}
	if _, err := s.StartNBTransaction().SetValue("route/default", "eth0").Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}

	mux := http.NewServeMux()
	mux.Handle("/scheduler/", schedulerhttp.Handler(s))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + schedulerhttp.StatusPath + "?key=route/default")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var st schedulerhttp.StatusJSON
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		fmt.Println(err)
		return
	}
	for _, dep := range st.WaitingFor {
		fmt.Println(st.Key, st.State, "waits for", dep.Key, dep.State)
	}
	// Output: route/default PENDING waits for link/eth0 NONEXISTENT
}
