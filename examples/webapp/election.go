package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// podNamespaceEnv names the pod's namespace (from the downward API), the
// default namespace of the Lease.
const podNamespaceEnv = "POD_NAMESPACE"

// defaultLeaseName is the default of --lease-name.
const defaultLeaseName = "webapp-operator"

// elect runs the operator on cfg, fenced, during each term of leadership
// of the Lease, until ctx ends. A lost lease stops the operator and the
// replica stands by; it does not exit.
func (t *term) elect(ctx context.Context, cfg *rest.Config) error {
	ns := t.o.leaseNamespace
	if ns == "" {
		ns = os.Getenv(podNamespaceEnv)
	}
	if ns == "" {
		ns = "default"
	}
	name := t.o.leaseName
	if name == "" {
		name = defaultLeaseName
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	e, err := leader.New(kube.CoordinationV1(), ns, name, leader.WithLogger(t.log))
	if err != nil {
		return err
	}
	// Every write of the operator goes through the fence: none is issued
	// once the renew deadline has passed.
	fenced := e.Fence(cfg)
	t.out.say("Waiting to lead (Lease %s/%s, identity %s).", ns, name, e.Identity())
	t.handler.standby("waiting to lead")
	return e.Run(ctx, func(ctx context.Context) error {
		t.out.say("Leading: starting the operator.")
		err := t.operate(ctx, fenced)
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), leader.ErrLeaseLost) {
			t.out.say("Lost the lease: the operator stopped; standing by.")
			t.handler.standby("lost the lease; standing by (leader: " + e.Leader() + ")")
		}
		return err
	})
}

// swappable serves the running operator's endpoints, or says it stands by.
type swappable struct {
	h atomic.Pointer[http.Handler]
}

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// use serves h from now on.
func (s *swappable) use(h http.Handler) { s.h.Store(&h) }

// standby answers every request with 503 and why (healthz with 200: a
// standby is healthy).
func (s *swappable) standby(why string) {
	s.use(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			fmt.Fprintln(w, "ok (standby)")
			return
		}
		http.Error(w, "standby: "+why, http.StatusServiceUnavailable)
	}))
}

// autoBool is a flag that is "auto", "true" or "false", and true when
// given alone (--leader-elect).
type autoBool string

func (a *autoBool) String() string { return string(*a) }

func (a *autoBool) Set(v string) error {
	if v != "auto" {
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("%q is not auto, true or false", v)
		}
	}
	*a = autoBool(v)
	return nil
}

// IsBoolFlag lets the flag stand alone.
func (a *autoBool) IsBoolFlag() bool { return true }

// parseAuto reads an auto/true/false flag; auto (or empty) means def.
func parseAuto(flagName, v string, def bool) (bool, error) {
	if v == "" || v == "auto" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s is %q, want auto, true or false", flagName, v)
	}
	return b, nil
}
