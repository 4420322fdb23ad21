// Command webapp runs Lariat's flagship example operator (package
// operator): WebApp custom resources become ConfigMaps, Deployments and
// Services, applied in dependency order by a KV scheduler behind an event
// loop.
//
// Against any cluster (the WebApp CRD from crds/ must be installed, or
// pass --install-crds):
//
//	webapp --kubeconfig ~/.kube/config
//
// On a local control plane that it starts and removes again, with sample
// WebApps and a running account of what happens (what `make run` does):
//
//	webapp --local --samples
//
// Against a cluster it elects a leader among its replicas over a Lease
// (--leader-elect, on by default there, off with --local): only the leader
// runs the operator; the others stand by and take over when it stops or is
// cut off (docs/replicas.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kubeconfig"
	"github.com/lariat-dev/lariat/pkg/signals"
)

// options are the command's flags.
type options struct {
	kubeconfig  string
	local       bool
	installCRDs bool
	crds        string
	samples     bool
	pause       time.Duration
	listen      string
	namespace   string
	nodePorts   string
	waitForPods string
	logLevel    string
	// leaderElect is "auto" (on against a cluster, off with --local),
	// "true" or "false".
	leaderElect string
	// installTermPolicy is "auto" (on with --local, off against a
	// cluster, where an administrator installs it), "true" or "false".
	installTermPolicy string
	leaseNamespace    string
	leaseName         string
	// allowedHosts are the host names the listener answers besides IP
	// addresses and localhost (dashboard.Options.AllowedHosts).
	allowedHosts []string
	// dashboardResync lets the dashboard request a resync.
	dashboardResync bool
	// serviceAccountNamespaceFile holds the pod's namespace when the
	// command runs in a cluster (tests point it elsewhere).
	serviceAccountNamespaceFile string
}

func main() {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv(clientcmd.RecommendedConfigPathEnvVar), "kubeconfig of the cluster to run against")
	flag.BoolVar(&o.local, "local", false, "start a local etcd and kube-apiserver (built by `make controlplane`) and run against it")
	flag.BoolVar(&o.installCRDs, "install-crds", false, "install the CRDs from --crds first (always done with --local)")
	flag.StringVar(&o.crds, "crds", "crds", "directory of the CRD manifests")
	flag.BoolVar(&o.samples, "samples", false, "create the sample WebApps, in namespace "+sampleNamespace+" or --namespace")
	flag.DurationVar(&o.pause, "pause", 2*time.Second, "pause between sample WebApps")
	flag.StringVar(&o.listen, "listen", "127.0.0.1:8089", "address of the dashboard (/ui/) and the event-history, scheduler and metrics endpoints")
	flag.StringVar(&o.namespace, "namespace", "", "only handle WebApps of this namespace (default: all)")
	flag.StringVar(&o.nodePorts, "node-ports", "30000-32767", "range node ports are allocated from, within the API server's --service-node-port-range")
	flag.StringVar(&o.waitForPods, "wait-for-pods", "auto", "true: a WebApp is available once its Deployment reports all replicas available; false: once its objects exist; auto: true unless --local (the local control plane runs no pods)")
	flag.StringVar(&o.logLevel, "log-level", "warning", "level of the operator's logs on stderr (debug shows every event and transaction in full)")
	o.leaderElect = "auto"
	flag.Var((*autoBool)(&o.leaderElect), "leader-elect", "run the operator only while holding the Lease --lease-namespace/--lease-name, so replicas take turns (auto: on against a cluster, off with --local)")
	o.installTermPolicy = "auto"
	flag.Var((*autoBool)(&o.installTermPolicy), "install-term-policy", "under --leader-elect, install the ValidatingAdmissionPolicy and binding by which the API server refuses creates sent in a term that is over (needs create and update on validatingadmissionpolicies and their bindings; auto: on with --local)")
	flag.StringVar(&o.leaseNamespace, "lease-namespace", "", "namespace of the leader-election Lease (default: the pod's own in a cluster, else --namespace, else default)")
	flag.StringVar(&o.leaseName, "lease-name", defaultLeaseName, "name of the leader-election Lease")
	flag.BoolVar(&o.dashboardResync, "dashboard-resync", false, "let the dashboard's page request a resync of the event loop (its one write action; off: the dashboard is read-only)")
	flag.Func("allowed-hosts", "comma-separated host names (of a proxy or ingress in front of --listen) the dashboard and the other endpoints answer besides IP addresses and localhost; requests for any other name get 403 (DNS rebinding)", func(v string) error {
		hosts, err := parseHosts(v)
		o.allowedHosts = append(o.allowedHosts, hosts...)
		return err
	})
	flag.Parse()
	o.serviceAccountNamespaceFile = serviceAccountNamespaceFile

	// Ctrl-C (or SIGTERM) ends ctx; run then stops everything it started.
	// A second Ctrl-C exits at once.
	ctx, stop := signals.Context(context.Background())
	defer stop()
	err := run(ctx, o, os.Stdout, nil)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Println("Stopped before everything had started.") // Ctrl-C while starting: a stop, not a failure
		err = nil
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// env is what a running command offers to tests.
type env struct {
	config   *rest.Config
	url      string             // base URL of the HTTP endpoints
	operator *operator.Operator // the first term's, under leader election
}

// run does the command's work until ctx ends. started, when not nil, is
// called once everything runs (and the samples, if any, are created).
func run(ctx context.Context, o options, w io.Writer, started func(env)) (err error) {
	out := newPrinter(w)
	log := logrus.New()
	level, err := logrus.ParseLevel(o.logLevel)
	if err != nil {
		return err
	}
	log.SetLevel(level)

	ports, err := parsePortRange(o.nodePorts)
	if err != nil {
		return err
	}
	waitForPods, err := parseAuto("--wait-for-pods", o.waitForPods, !o.local)
	if err != nil {
		return err
	}
	leaderElect, err := parseAuto("--leader-elect", o.leaderElect, !o.local)
	if err != nil {
		return err
	}
	installTermPolicy, err := parseAuto("--install-term-policy", o.installTermPolicy, o.local)
	if err != nil {
		return err
	}
	// Before the control plane starts, so a taken port fails at once.
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen for the HTTP endpoints (choose another --listen): %w", err)
	}
	defer lis.Close()
	// The dashboard's URL comes first: open it now and watch everything
	// start (it says "not started yet" until the operator runs).
	out.say("Dashboard: http://%s/ui/  (live, read-only; serves once the operator runs)", lis.Addr())
	cfg, kubeconfig, stopCluster, err := cluster(ctx, o, log, out)
	if err != nil {
		return err
	}
	defer stopCluster()

	handler := &swappable{}
	handler.standby("not started yet")
	// The whole listener answers its own names only, the standby page
	// too (the operator's Handler checks again, for its own users).
	srv := &http.Server{Handler: dashboard.Protect(handler, o.allowedHosts), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	t := &term{o: o, cfg: cfg, out: out, log: log, url: "http://" + lis.Addr().String(), kubeconfig: kubeconfig,
		handler: handler, ports: ports, waitForPods: waitForPods, installTermPolicy: installTermPolicy, started: started}
	if !leaderElect {
		return t.operate(ctx, cfg, nil)
	}
	return t.elect(ctx, cfg)
}

// term runs the operator, once, or once per term of leadership.
type term struct {
	o           options
	cfg         *rest.Config // the cluster's, unfenced
	out         *printer
	log         *logrus.Logger
	url         string
	kubeconfig  string
	handler     *swappable
	ports       operator.PortRange
	waitForPods bool
	// installTermPolicy installs the term fence of creates (--install-term-policy).
	installTermPolicy bool
	started           func(env)
	terms             int
	// replicas tells the dashboard who leads (set under leader election).
	replicas func() dashboard.Replicas
}

// operate builds an operator on cfg and runs it until ctx ends (the
// operator's loop and scheduler do not start twice: each term of
// leadership gets an operator of its own).
func (t *term) operate(ctx context.Context, cfg *rest.Config, passes controller.PassTracker) error {
	t.terms++
	o, out := t.o, t.out
	loopCfg := operator.DefaultEventLoopConfig()
	loopCfg.EventLogLevel = logrus.DebugLevel // the printer tells the story
	op, err := operator.New(operator.Options{Config: cfg, Namespace: o.namespace, NodePorts: t.ports, WaitForPods: t.waitForPods, Logger: t.log, EventLoop: &loopCfg, Passes: passes, Replicas: t.replicas, AllowedHosts: o.allowedHosts, AllowResync: o.dashboardResync})
	if err != nil {
		return err
	}
	t.handler.use(op.Handler())
	url := t.url

	opCtx, cancelOp := context.WithCancel(ctx)
	defer cancelOp()
	out.followReadiness(opCtx, op)
	go out.followEvents(opCtx, op.Loop(), op.Scheduler())
	// The operator stops before the control plane does, whichever way run
	// returns.
	var opErr error
	opExited := make(chan struct{})
	go func() { opErr = op.Run(opCtx); close(opExited) }()
	defer func() { cancelOp(); <-opExited }()
	if t.terms > 1 {
		out.say("The operator is running again.")
	} else {
		out.say("The operator is running. Look at:\n"+
			"  %s/ui/                               the live dashboard\n"+
			"  %s/controller/event-history?last=10  the last events the loop processed\n"+
			"  %s/scheduler/status                  every object and what it waits for\n"+
			"  %s/scheduler/txn-history?format=text the scheduler's transactions\n"+
			"  %s/metrics                           Prometheus metrics", url, url, url, url, url)
	}

	if o.samples && t.terms == 1 {
		ns := sampleNamespace
		if o.namespace != "" {
			ns = o.namespace
		}
		if err := createSamples(ctx, cfg, ns, op.WebApps(), o.pause, out); err != nil && ctx.Err() == nil {
			return err
		}
		k := "kubectl --kubeconfig " + t.kubeconfig + " -n " + ns
		out.say("Things to try in another terminal:\n"+
			"  %s get webapps\n"+
			"  %s delete deployment api       # deleted behind the operator's back: it is restored\n"+
			"  %s delete webapp database      # api's and frontend's objects go; both wait for it again\n"+
			"  curl -s '%s/scheduler/status?key=apps/Deployment/%s/api'", k, k, k, url, ns)
	}
	if t.started != nil && t.terms == 1 {
		t.started(env{config: t.cfg, url: url, operator: op})
	}
	if ctx.Err() == nil && t.terms == 1 {
		out.say("Running until Ctrl-C.")
	}

	select {
	case <-ctx.Done():
		out.say("Stopping the operator.")
		cancelOp()
		<-opExited
	case <-opExited:
	}
	return opErr
}

// cluster returns the config of the cluster to run against, the path of
// its kubeconfig, and a function that stops it: a local control plane, or
// the kubeconfig's cluster.
func cluster(ctx context.Context, o options, log *logrus.Logger, out *printer) (*rest.Config, string, func(), error) {
	if o.local {
		out.say("Starting a local control plane (etcd and kube-apiserver %s) and installing the CRDs from %s.", controlplane.KubernetesVersion, o.crds)
		cp, err := controlplane.Start(ctx, controlplane.Options{CRDDirs: []string{o.crds}, Logger: log})
		if err != nil {
			return nil, "", nil, err
		}
		out.say("The API server is ready at %s.\n"+
			"  kubectl --kubeconfig %s get webapps,deployments,services,configmaps -n %s\n"+
			"It has no kubelet and no controller manager: Deployments get no pods, and WebApps are\n"+
			"ready once the API server shows their objects.", cp.URL(), cp.KubeconfigPath(), sampleNamespace)
		return cp.Config(), cp.KubeconfigPath(), func() {
			out.say("Stopping the control plane.")
			if err := cp.Stop(); err != nil {
				out.say("Stopping the control plane failed: %v", err)
				return
			}
			out.say("Stopped; the control plane's processes and files are gone.")
		}, nil
	}
	if o.kubeconfig == "" {
		return nil, "", nil, errors.New("no cluster: pass --kubeconfig (or set KUBECONFIG) to run against a cluster, or --local to start a local control plane")
	}
	cfg, err := kubeconfig.Load(o.kubeconfig)
	if err != nil {
		return nil, "", nil, err
	}
	if o.installCRDs {
		out.say("Installing the CRDs from %s.", o.crds)
		if err := controlplane.InstallCRDs(ctx, cfg, o.crds); err != nil {
			return nil, "", nil, err
		}
	}
	return cfg, o.kubeconfig, func() {}, nil
}

// parsePortRange reads "first-last"; empty means the operator's default.
func parsePortRange(s string) (operator.PortRange, error) {
	if s == "" {
		return operator.PortRange{}, nil
	}
	var r operator.PortRange
	if _, err := fmt.Sscanf(s, "%d-%d", &r.First, &r.Last); err != nil || r.First <= 0 || r.Last < r.First || r.Last > 65535 {
		return r, fmt.Errorf("--node-ports %q is not a port range such as 30000-32767", s)
	}
	return r, nil
}

// parseHosts splits the value of --allowed-hosts: host names, with or
// without a port, separated by commas. A name with a scheme or a path is
// refused: the flag names hosts, not URLs.
func parseHosts(v string) ([]string, error) {
	var hosts []string
	for h := range strings.SplitSeq(v, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, "/ ") {
			return nil, fmt.Errorf("--allowed-hosts: %q is not a host name (give names such as dash.example.com, without scheme or path)", h)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}
