package schedulerhttp

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

func (h *handler) status(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Has("key") && q.Has("descriptor") {
		return badParam{errors.New("parameters key and descriptor are exclusive")}
	}
	if q.Has("key") {
		key := q.Get("key")
		if key == "" {
			return badParam{errors.New("parameter key must not be empty")}
		}
		st := h.s.GetValueStatus(key)
		if st.State == kvscheduler.NonExistent {
			return notFound{fmt.Errorf("key %q is unknown to the scheduler", key)}
		}
		writeJSON(w, http.StatusOK, h.explain(st))
		return nil
	}
	var sts []kvscheduler.ValueStatus
	if q.Has("descriptor") {
		desc := q.Get("descriptor")
		if desc == "" {
			return badParam{errors.New("parameter descriptor must not be empty")}
		}
		// The scheduler has no lookup by descriptor: filter all statuses.
		for _, st := range h.s.ValueStatuses(nil) {
			if st.Descriptor == desc {
				sts = append(sts, st)
			}
		}
	} else {
		sts = h.s.ValueStatuses(nil)
	}
	out := make([]StatusJSON, 0, len(sts))
	for _, st := range sts {
		out = append(out, h.explain(st))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// anyOfPrefix starts the name the scheduler gives an unlabeled any-of
// dependency.
const anyOfPrefix = "any-of"

// explain encodes st and, for a PENDING value, resolves what it waits for.
// The status's dependency list tells labeled dependencies from keys and
// names the candidates of any-of dependencies; a name it does not describe
// (the base of a derived value) is resolved from the name alone.
func (h *handler) explain(st kvscheduler.ValueStatus) StatusJSON {
	out := encodeStatus(st)
	if st.State != kvscheduler.Pending {
		return out
	}
	described := make(map[string]kvscheduler.DependencyStatus, len(st.Dependencies))
	for _, d := range st.Dependencies {
		if !d.Met {
			described[d.Label] = d
		}
	}
	for _, dep := range st.UnmetDependencies {
		if d, ok := described[dep]; ok {
			out.WaitingFor = append(out.WaitingFor, h.resolveDescribed(d))
			continue
		}
		out.WaitingFor = append(out.WaitingFor, h.resolveDependency(dep))
	}
	return out
}

// resolveDescribed explains an unmet dependency from its description.
func (h *handler) resolveDescribed(dep kvscheduler.DependencyStatus) DependencyJSON {
	d := DependencyJSON{Dependency: dep.Label}
	if dep.Key != "" {
		ds := h.s.GetValueStatus(dep.Key)
		d.Key, d.State, d.Error = dep.Key, ds.State.String(), errString(ds.Error)
		if ds.State == kvscheduler.Pending {
			d.UnmetDependencies = ds.UnmetDependencies
		}
		return d
	}
	seen := map[string]bool{}
	for _, k := range dep.Keys {
		seen[k] = true
		d.Candidates = append(d.Candidates, KeyStateJSON{Key: k, State: h.s.GetValueStatus(k).State.String()})
	}
	// Only an unlabeled any-of dependency carries its prefixes in its name;
	// with them, values that never joined the graph (INVALID, FAILED, ...)
	// are shown too, since they explain why nothing matches.
	if strings.HasPrefix(dep.Label, anyOfPrefix) {
		byName := h.resolveDependency(dep.Label)
		d.AnyOfPrefixes = byName.AnyOfPrefixes
		for _, c := range byName.Candidates {
			if !seen[c.Key] {
				d.Candidates = append(d.Candidates, c)
			}
		}
		sort.Slice(d.Candidates, func(i, j int) bool { return d.Candidates[i].Key < d.Candidates[j].Key })
	}
	return d
}

func (h *handler) resolveDependency(dep string) DependencyJSON {
	d := DependencyJSON{Dependency: dep}
	// A key equal to the any-of name is taken as a key: it is the more
	// specific reading.
	if ds := h.s.GetValueStatus(dep); ds.State != kvscheduler.NonExistent || !strings.HasPrefix(dep, anyOfPrefix) {
		d.Key, d.State, d.Error = dep, ds.State.String(), errString(ds.Error)
		if ds.State == kvscheduler.Pending {
			d.UnmetDependencies = ds.UnmetDependencies
		}
		return d
	}
	prefixes := strings.Split(strings.TrimPrefix(dep, anyOfPrefix), "|")
	d.AnyOfPrefixes = prefixes
	for _, st := range h.s.ValueStatuses(func(k string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		return false
	}) {
		d.Candidates = append(d.Candidates, KeyStateJSON{Key: st.Key, State: st.State.String()})
	}
	return d
}
