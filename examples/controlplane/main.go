// Command controlplane starts a local etcd and kube-apiserver, prints how to
// reach them, and keeps them running until interrupted (Ctrl-C), then stops
// them and removes their files. `make run` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/controlplane"
)

func main() {
	var crds, logDir string
	flag.StringVar(&crds, "crds", "", "comma-separated directories of CRD manifests to install")
	flag.StringVar(&logDir, "log-dir", "", "directory for etcd.log and kube-apiserver.log (kept after exit)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, crds, logDir); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, crds, logDir string) error {
	log := logrus.New()
	opts := controlplane.Options{LogDir: logDir, Logger: log}
	if crds != "" {
		opts.CRDDirs = strings.Split(crds, ",")
	}
	log.Info("starting etcd and kube-apiserver ", controlplane.KubernetesVersion)
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		log.Info("stopping the control plane")
		if err := cp.Stop(); err != nil {
			log.WithError(err).Error("stop")
			return
		}
		log.Info("stopped; every process and file of the control plane is gone")
	}()
	fmt.Printf(`
The control plane is running.
  API server:  %s
  kubeconfig:  %s

Use it with kubectl (Debian package kubernetes-client) or any client:
  kubectl --kubeconfig %s get namespaces

Press Ctrl-C to stop it; its data and files are removed.
`, cp.URL(), cp.KubeconfigPath(), cp.KubeconfigPath())
	<-ctx.Done()
	return nil
}
