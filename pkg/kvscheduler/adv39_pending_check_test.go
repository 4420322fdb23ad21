package kvscheduler_test

import (
	"flag"
	"fmt"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

var fzPendMet = flag.Bool("fzpendmet", false, "check after every step that no value is reported PENDING with no unmet dependency")

// fzCheckPendingMet names a value the scheduler reports PENDING while it
// lists no dependency that keeps it from being created: its status
// answers "why is it pending" with nothing, and nothing in the step left
// to come creates it.
func fzCheckPendingMet(s *kvscheduler.Scheduler) string {
	for _, st := range s.ValueStatuses(nil) {
		if st.State == kvscheduler.Pending && len(st.UnmetDependencies) == 0 {
			return fmt.Sprintf("%s PENDING with no unmet dependency (%v)", st.Key, st.Dependencies)
		}
	}
	return ""
}
