package shard_test

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// Every replica runs the ring's sharder next to its member: the elected one
// assigns Deployments, and the ConfigMaps a Deployment controls follow it.
func ExampleNewSharder() {
	run := func(ctx context.Context, cfg *rest.Config, identity string) error {
		ring := shard.Ring{Name: "webapps", Namespace: "webapp-system", Kinds: []shard.Kind{
			{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment")},
			{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Owner: appsv1.SchemeGroupVersion.WithKind("Deployment").GroupKind()},
		}}
		s, err := shard.NewSharder(cfg, ring, shard.SharderOptions{
			Leader:     []leader.Option{leader.WithIdentity(identity)},
			Registerer: prometheus.DefaultRegisterer,
		})
		if err != nil {
			return err
		}
		return s.Run(ctx) // until ctx ends; it works only while elected
	}
	_ = run
}
