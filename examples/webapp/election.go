package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// serviceAccountNamespaceFile is where a pod finds its own namespace.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// defaultLeaseName is the default of --lease-name.
const defaultLeaseName = "webapp-operator"

// elect runs the operator on cfg, fenced, during each term of leadership
// of the Lease, until ctx ends. A lost lease stops the operator and the
// replica stands by; it does not exit.
func (t *term) elect(ctx context.Context, cfg *rest.Config) error {
	ns, err := leaseNamespace(t.o)
	if err != nil {
		return err
	}
	name := t.o.leaseName
	if name == "" {
		name = defaultLeaseName
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Creates through the fence carry their term; the policy makes the API
	// server refuse one that arrives after the term (docs/replicas.md).
	// Run warns, by name, when it is not installed.
	adm := kube.AdmissionregistrationV1()
	if t.installTermPolicy {
		if err := leader.InstallTermPolicy(ctx, adm, ns, name); err != nil {
			return err
		}
		t.out.say("Installed the term fence of creates (ValidatingAdmissionPolicy %s, binding %s).", leader.TermPolicyName, leader.TermPolicyBindingName(ns, name))
	}
	e, err := leader.New(kube.CoordinationV1(), ns, name, leader.WithLogger(t.log), leader.WithTermPolicyCheck(adm))
	if err != nil {
		return err
	}
	// Every write of the operator goes through the fence: none is issued
	// once the renew deadline has passed, and none issued before it lands
	// after another leader wrote the object it handles (Passes).
	fenced := e.Fence(cfg)
	t.replicas = func() dashboard.Replicas {
		r := dashboard.Replicas{Mode: "leader", Identity: e.Identity(), Leader: e.Leader(), Holding: e.Holding()}
		if r.Leader != "" {
			r.Members = []dashboard.Member{{ID: r.Leader, Share: 1, Leader: true}}
		}
		return r
	}
	t.out.say("Waiting to lead (Lease %s/%s, identity %s).", ns, name, e.Identity())
	t.handler.standby("waiting to lead")
	return e.Run(ctx, func(ctx context.Context) error {
		t.out.say("Leading: starting the operator.")
		err := t.operate(ctx, fenced, e.PassTracker())
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), leader.ErrLeaseLost) {
			t.out.say("Lost the lease: the operator stopped; standing by.")
			t.handler.standby("lost the lease; standing by (leader: " + e.Leader() + ")")
		}
		return err
	})
}

// leaseNamespace is the namespace of the Lease: --lease-namespace; else,
// in a cluster, the pod's own (its service account's namespace file, which
// the kubelet mounts in every pod that has a token); else --namespace; else
// default.
func leaseNamespace(o options) (string, error) {
	if o.leaseNamespace != "" {
		return o.leaseNamespace, nil
	}
	if o.serviceAccountNamespaceFile != "" {
		data, err := os.ReadFile(o.serviceAccountNamespaceFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("the pod's namespace (pass --lease-namespace): %w", err)
		}
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns, nil
		}
	}
	if o.namespace != "" {
		return o.namespace, nil
	}
	return "default", nil
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
		if r.URL.Path == "/ui/" {
			// The dashboard's URL is printed before the operator runs: a
			// browser opened at once waits here and reloads by itself.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `<!doctype html><meta http-equiv="refresh" content="1"><title>Lariat: standby</title><p>The operator is not running (%s); this page reloads until it is.</p>`, html.EscapeString(why))
			return
		}
		http.Error(w, "standby: "+why, http.StatusServiceUnavailable)
	}))
}

// autoBool is a flag that is "auto", "true" or "false", and true when
// given alone (--leader-elect). Set keeps the text as given: run parses it,
// once, with parseAuto, as it does --wait-for-pods, so a bad value fails
// there, naming the flag, before anything starts.
type autoBool string

func (a *autoBool) String() string { return string(*a) }

func (a *autoBool) Set(v string) error {
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
