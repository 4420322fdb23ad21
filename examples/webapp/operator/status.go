package operator

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Ready is the WebApp's summary condition.
const Ready = condition.Cond("Ready")

// Reasons of the Ready condition.
const (
	// ReasonAvailable: every object is applied and the WebApp is available.
	ReasonAvailable = "Available"
	// ReasonWaiting: the objects wait for the WebApps listed in
	// status.waitingFor to become available.
	ReasonWaiting = "WaitingForDependencies"
	// ReasonCycle: the WebApp depends, directly or not, on itself.
	ReasonCycle = "DependencyCycle"
	// ReasonFailed: the API server rejected an object; the message says why.
	ReasonFailed = "Failed"
	// ReasonProgressing: objects are being applied (or retried).
	ReasonProgressing = "Progressing"
)

// reporter writes each WebApp's status from the scheduler's view of its
// objects. It runs in the WebApp controller's workers, not in the event
// loop: it only reads the scheduler (safe from any goroutine) and caches,
// and a slow status write never holds up the loop.
type reporter struct {
	sched    *kvscheduler.Scheduler
	webapps  generic.CacheInterface[*demov1.WebApp]
	services generic.CacheInterface[*corev1.Service]
	notes    *notices
	// waitForPods: see Options.WaitForPods.
	waitForPods bool
}

// status computes the status of app. It never returns an error: waiting
// is a state, not a failure, and the scheduler's status watch re-runs it
// whenever one of the app's values changes.
func (r *reporter) status(app *demov1.WebApp, status demov1.WebAppStatus) (demov1.WebAppStatus, error) {
	ns, name := app.Namespace, app.Name
	// The Service cache may not have synced yet (this handler runs once
	// WebApps have): the port recorded stays until the Service is known.
	switch svc, err := r.services.Get(ns, name); {
	case err == nil && len(svc.Spec.Ports) > 0:
		status.NodePort = svc.Spec.Ports[0].NodePort
	case !cache.IsNotSynced(err):
		status.NodePort = 0
	}
	waiting := map[string]bool{}
	var failed, progressing []string
	for _, obj := range []struct{ kind, key string }{
		{"ConfigMap", ConfigMapKey(ns, name)},
		{"Deployment", DeploymentKey(ns, name)},
		{"Service", ServiceKey(ns, name)},
	} {
		st := r.sched.GetValueStatus(obj.key)
		switch st.State {
		case kvscheduler.Configured:
		case kvscheduler.Pending:
			for _, dep := range st.UnmetDependencies {
				if strings.HasPrefix(dep, AvailablePrefix) {
					_, depName, _ := appOfKey(dep)
					waiting[depName] = true
				}
			}
		case kvscheduler.Failed, kvscheduler.Invalid:
			failed = append(failed, fmt.Sprintf("%s %s: %v", obj.kind, st.State, st.Error))
		case kvscheduler.Retrying:
			progressing = append(progressing, fmt.Sprintf("%s retrying: %v", obj.kind, st.Error))
		case kvscheduler.NonExistent:
			progressing = append(progressing, obj.kind+" not applied yet")
		default:
			progressing = append(progressing, fmt.Sprintf("%s %s", obj.kind, st.State))
		}
	}
	if problem := r.notes.get(appKey(ns, name)); problem != "" {
		failed = append(failed, problem)
	}
	status.WaitingFor = nil
	if len(waiting) > 0 {
		status.WaitingFor = slices.Sorted(maps.Keys(waiting))
	}
	gen := app.Generation
	conds := &status.Conditions
	switch {
	case len(failed) > 0:
		Ready.False(conds, gen, ReasonFailed, strings.Join(failed, "; "))
	case len(status.WaitingFor) > 0:
		if cycle := r.cycle(app); cycle != nil {
			Ready.False(conds, gen, ReasonCycle, "dependency cycle: "+strings.Join(cycle, " -> "))
			break
		}
		var parts []string
		for _, dep := range status.WaitingFor {
			if _, err := r.webapps.Get(ns, dep); apierrors.IsNotFound(err) {
				dep += " (no such WebApp)"
			}
			parts = append(parts, dep)
		}
		Ready.False(conds, gen, ReasonWaiting, "waiting for "+strings.Join(parts, ", ")+" to be available")
	case len(progressing) > 0:
		Ready.False(conds, gen, ReasonProgressing, strings.Join(progressing, "; "))
	case r.sched.GetValueStatus(AvailableKey(ns, name)).State != kvscheduler.Configured:
		msg := "objects applied; waiting for the API server to show them"
		if r.waitForPods {
			msg += " and the Deployment's replicas to be available"
		}
		Ready.False(conds, gen, ReasonProgressing, msg)
	default:
		Ready.True(conds, gen, ReasonAvailable, fmt.Sprintf("ConfigMap, Deployment and Service applied; node port %d", status.NodePort))
	}
	return status, nil
}

// cycle returns the dependency path from app back to itself, if any.
func (r *reporter) cycle(app *demov1.WebApp) []string {
	seen := map[string]bool{}
	var walk func(name string, path []string) []string
	walk = func(name string, path []string) []string {
		a, err := r.webapps.Get(app.Namespace, name)
		if err != nil {
			return nil
		}
		for _, dep := range a.Spec.DependsOn {
			if dep == app.Name {
				return append(path, dep)
			}
			if !seen[dep] {
				seen[dep] = true
				if c := walk(dep, append(slices.Clone(path), dep)); c != nil {
					return c
				}
			}
		}
		return nil
	}
	return walk(app.Name, []string{app.Name})
}
