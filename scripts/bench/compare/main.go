// Command compare runs the same controller workloads on Lariat, lasso and
// controller-runtime against one local control plane and prints a table of
// the results with Lariat's ratios to the faster peer. `make bench` runs it.
//
// Workloads (-workload): configmaps, the default, are ConfigMaps of about
// 2 KB written with server-side apply; pods are Pods of about 15 KB as a
// real cluster stores them, written by three field managers (the spec by a
// controller, sidecar metadata by an injector, the status by the kubelet);
// crs are custom resources of a CRD whose schema embeds a Pod template
// (generated from the Go types), each carrying a Pod spec like the pods
// workload's and written by three field managers the same way (not run by
// wrangler-on-lariat: wrangler has no generated controller for the kind).
// Phases:
//
//  1. cold start: N pre-created objects: time from starting the framework
//     until every key has been handled once, the Go heap in use after that
//     (after GC), and the peak heap (sampled) and RSS during it;
//  2. steady state: U updates to those objects: time from the first write
//     until every update has been handled;
//  3. dispatch without an API server: K keys through the queue and a no-op
//     handler (with the configmaps workload only: it lists no objects).
//
// Every framework runs in a child process of its own, so one framework's
// garbage and goroutines cannot skew another's heap or timing; the parent
// owns the control plane and the objects, so all of them see the same data.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// result is what a child reports on its standard output, as JSON.
type result struct {
	Framework     string  `json:"framework"`
	ColdStart     float64 `json:"coldStartSeconds,omitempty"`
	FirstHandled  float64 `json:"firstHandledSeconds,omitempty"`
	Synced        float64 `json:"syncedSeconds,omitempty"`
	HeapBytes     uint64  `json:"heapBytes,omitempty"`
	PeakHeapBytes uint64  `json:"peakHeapBytes,omitempty"`
	PeakRSSBytes  uint64  `json:"peakRSSBytes,omitempty"`
	// ColdStartCPU is the CPU time (user and system, all threads) the
	// child spent in its cold start: on a machine whose cores the API
	// server shares, every client CPU-second lengthens the cold start,
	// and this varies with the load much less than the wall time.
	ColdStartCPU  float64 `json:"coldStartCPUSeconds,omitempty"`
	Steady        float64 `json:"steadySeconds,omitempty"`
	Dispatch      float64 `json:"dispatchSeconds,omitempty"`
	DispatchAlloc uint64  `json:"dispatchAllocBytes,omitempty"`
	// DispatchCPU is the CPU time (user and system, all threads) the
	// child spent in its dispatch: on a loaded machine the wall time
	// measures how many cores the scheduler gave the child, which moves
	// the dispatch row 2-3x between runs of the same code.
	DispatchCPU float64 `json:"dispatchCPUSeconds,omitempty"`
}

type config struct {
	objects, updates, keys, workers int
	rounds                          int
	frameworks                      []string
	kubeconfig, namespace, child    string
	// baseline is the binary that runs the frameworks named with
	// baselineSuffix: the same code at another commit.
	baseline        string
	phase, workload string
}

func main() {
	var cfg config
	var frameworks string
	flag.StringVar(&cfg.workload, "workload", "configmaps", "objects to pre-create: "+workloadNames())
	flag.IntVar(&cfg.objects, "objects", 10000, "objects to pre-create for the cold start")
	flag.IntVar(&cfg.updates, "updates", 5000, "updates in the steady-state phase")
	flag.IntVar(&cfg.keys, "keys", 1000000, "keys in the dispatch phase")
	flag.IntVar(&cfg.workers, "workers", 2, "workers per controller")
	flag.IntVar(&cfg.rounds, "rounds", 3, "runs of every phase per framework; the median is reported")
	flag.StringVar(&frameworks, "frameworks", strings.Join(frameworkNames, ","), "frameworks to compare")
	flag.StringVar(&cfg.baseline, "baseline", "", "a compare binary built at another commit; a framework named NAME"+baselineSuffix+" in -frameworks runs NAME from it, for a before/after in one run")
	// Child-process flags.
	flag.StringVar(&cfg.child, "child", "", "internal: run one framework")
	flag.StringVar(&cfg.phase, "phase", "", "internal: cluster or dispatch")
	flag.StringVar(&cfg.kubeconfig, "kubeconfig", "", "internal: control plane to use")
	flag.StringVar(&cfg.namespace, "namespace", "bench", "namespace of the objects")
	flag.Parse()
	cfg.frameworks = strings.Split(frameworks, ",")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if cfg.child != "" {
		err = runChild(ctx, cfg)
	} else {
		err = runParent(ctx, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func runChild(ctx context.Context, cfg config) error {
	fw, ok := frameworksByName[cfg.child]
	if !ok {
		return fmt.Errorf("unknown framework %q", cfg.child)
	}
	if _, ok := workloads[cfg.workload]; !ok {
		return fmt.Errorf("unknown workload %q", cfg.workload)
	}
	var r result
	var err error
	switch cfg.phase {
	case "cluster":
		r, err = clusterPhase(ctx, cfg, fw)
	case "dispatch":
		r, err = dispatchPhase(ctx, cfg, fw)
	default:
		return fmt.Errorf("unknown phase %q", cfg.phase)
	}
	if err != nil {
		return err
	}
	r.Framework = cfg.child
	return json.NewEncoder(os.Stdout).Encode(r)
}

func runParent(ctx context.Context, cfg config) error {
	results, err := compare(ctx, cfg)
	if err != nil {
		return err
	}
	printTable(os.Stdout, cfg, results)
	return nil
}

// compare prepares the cluster and runs every framework's phases in child
// processes.
func compare(ctx context.Context, cfg config) (map[string]*result, error) {
	log := logrus.New()
	log.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true})
	for _, name := range cfg.frameworks {
		if strings.HasSuffix(name, baselineSuffix) && cfg.baseline == "" {
			return nil, fmt.Errorf("framework %q needs -baseline", name)
		}
		if _, ok := frameworksByName[strings.TrimSuffix(name, baselineSuffix)]; !ok {
			return nil, fmt.Errorf("unknown framework %q (known: %s)", name, strings.Join(slices.Sorted(maps.Keys(frameworksByName)), ", "))
		}
	}
	w, ok := workloads[cfg.workload]
	if !ok {
		return nil, fmt.Errorf("unknown workload %q (known: %s)", cfg.workload, workloadNames())
	}
	phases := []string{"cluster"}
	if w.dispatch {
		phases = append(phases, "dispatch")
	}
	cluster, err := prepareCluster(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	defer cluster.Stop()

	// Each round runs the frameworks in a rotated order, so none is always
	// first after the objects were created (when the API server is busiest)
	// or always last; the median of the rounds is reported.
	runs := map[string][]result{}
	for round := range max(cfg.rounds, 1) {
		for _, phase := range phases {
			for i := range cfg.frameworks {
				name := cfg.frameworks[(i+round)%len(cfg.frameworks)]
				log.Infof("round %d: %s: %s phase", round+1, name, phase)
				r, err := runChildProcess(ctx, cfg, name, phase, cluster.KubeconfigPath())
				if err != nil {
					return nil, err
				}
				runs[name+"/"+phase] = append(runs[name+"/"+phase], r)
			}
		}
	}
	results := map[string]*result{}
	for _, name := range cfg.frameworks {
		c, d := runs[name+"/cluster"], runs[name+"/dispatch"]
		results[name] = &result{
			Framework:     name,
			ColdStart:     median(c, func(r result) float64 { return r.ColdStart }),
			FirstHandled:  median(c, func(r result) float64 { return r.FirstHandled }),
			Synced:        median(c, func(r result) float64 { return r.Synced }),
			HeapBytes:     uint64(median(c, func(r result) float64 { return float64(r.HeapBytes) })),
			PeakHeapBytes: uint64(median(c, func(r result) float64 { return float64(r.PeakHeapBytes) })),
			PeakRSSBytes:  uint64(median(c, func(r result) float64 { return float64(r.PeakRSSBytes) })),
			ColdStartCPU:  median(c, func(r result) float64 { return r.ColdStartCPU }),
			Steady:        median(c, func(r result) float64 { return r.Steady }),
			Dispatch:      median(d, func(r result) float64 { return r.Dispatch }),
			DispatchAlloc: uint64(median(d, func(r result) float64 { return float64(r.DispatchAlloc) })),
			DispatchCPU:   median(d, func(r result) float64 { return r.DispatchCPU }),
		}
	}
	return results, nil
}

// baselineSuffix marks a framework run from the -baseline binary: the
// same framework at another commit, measured against the same control
// plane and objects, rounds rotated with the others, so a change's effect
// is compared within one run (this machine's load moves the time rows
// more between runs than most changes do).
const baselineSuffix = "@base"

func runChildProcess(ctx context.Context, cfg config, name, phase, kubeconfig string) (result, error) {
	args := []string{
		"-child", name, "-phase", phase, "-kubeconfig", kubeconfig, "-namespace", cfg.namespace, "-workload", cfg.workload,
		"-objects", fmt.Sprint(cfg.objects), "-updates", fmt.Sprint(cfg.updates),
		"-keys", fmt.Sprint(cfg.keys), "-workers", fmt.Sprint(cfg.workers),
	}
	binary := os.Args[0]
	var env []string // nil: the parent's
	if base, ok := strings.CutSuffix(name, baselineSuffix); ok {
		binary, args[1] = cfg.baseline, base
		var err error
		if env, err = baselineProfileEnv(); err != nil {
			return result{}, err
		}
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%s %s phase: %w", name, phase, err)
	}
	var r result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return result{}, fmt.Errorf("%s %s phase: bad output %q: %w", name, phase, stdout.String(), err)
	}
	return r, nil
}

// baselineProfileEnv returns the environment of a baseline child: the
// profile directories, when set, point to their "base" subdirectory. The
// child runs under the framework's name without the suffix, so its
// profiles would otherwise overwrite those of the framework it is compared
// with. It returns nil when no profile directory is set.
func baselineProfileEnv() ([]string, error) {
	var env []string
	for _, v := range []string{"LARIAT_BENCH_CPU_PROFILE_DIR", "LARIAT_BENCH_HEAP_PROFILE_DIR"} {
		dir := os.Getenv(v)
		if dir == "" {
			continue
		}
		dir = filepath.Join(dir, "base")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		env = append(env, v+"="+dir)
	}
	if env == nil {
		return nil, nil
	}
	// exec keeps the last value of a variable set twice.
	return append(os.Environ(), env...), nil
}

// median returns the median of one measurement over several runs (the
// upper middle one for an even count).
func median(runs []result, value func(result) float64) float64 {
	vs := make([]float64, len(runs))
	for i, r := range runs {
		vs[i] = value(r)
	}
	slices.Sort(vs)
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)/2]
}

// deadline bounds each phase so a framework that never finishes fails the
// run with a message instead of hanging it.
const deadline = 15 * time.Minute
