package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// workload is the kind of object the cluster phase lists and updates.
type workload struct {
	name string
	// describe says what is created, for the log.
	describe string
	// prefix starts every object's name.
	prefix string
	// resource is the kind's plural resource name, for raw reads.
	resource string
	// newObject returns an empty object of the kind, for the frameworks'
	// typed registration and for controller-runtime's cache reads.
	newObject func() crclient.Object
	// create writes object i the way a real cluster would.
	create func(ctx context.Context, cs kubernetes.Interface, ns, name string, i int) error
	// update changes the object's generation marker with a merge patch,
	// the cheapest real update.
	update func(ctx context.Context, cs kubernetes.Interface, ns, name, gen string) error
	// gen reads the marker back from an object a handler received.
	gen func(runtime.Object) string
	// markerInMetadata says the marker is an annotation, which a
	// metadata-only cache holds (lariat-metadata needs it).
	markerInMetadata bool
	// dispatch says whether the dispatch phase runs: it does not depend on
	// the objects, so it runs with the default workload only.
	dispatch bool
	// setup, when set, prepares the cluster before the objects are created
	// (installs a CRD).
	setup func(ctx context.Context, cs kubernetes.Interface) error
	// apiPath is the API's path of the kind's objects in a namespace
	// ("/api/v1" for the core kinds when empty), for raw reads.
	apiPath string
}

var workloads = map[string]workload{
	"configmaps": {
		name: "configmaps", describe: "ConfigMaps of about 2 KB with server-side apply", prefix: "cm-", resource: "configmaps",
		newObject: func() crclient.Object { return &corev1.ConfigMap{} },
		create: func(ctx context.Context, cs kubernetes.Interface, ns, name string, _ int) error {
			return applyConfigMap(ctx, cs, ns, name)
		},
		update:   setGen,
		gen:      configMapGen,
		dispatch: true,
	},
	"pods": {
		name: "pods", describe: "Pods of about 15 KB written by three field managers (spec, sidecar metadata, status)", prefix: "pod-", resource: "pods",
		newObject: func() crclient.Object { return &corev1.Pod{} },
		create:    applyPod,
		update: func(ctx context.Context, cs kubernetes.Interface, ns, name, gen string) error {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"bench/gen":%q}}}`, gen)
			_, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		},
		gen: func(obj runtime.Object) string {
			if p, ok := obj.(*corev1.Pod); ok {
				return p.Annotations["bench/gen"]
			}
			return ""
		},
		markerInMetadata: true,
	},
	"crs": {
		name: "crs", describe: "custom resources of about 10 KB, whose CRD embeds a Pod template, written by three field managers (spec, sidecar metadata, status)",
		prefix: "app-", resource: "benchapps", apiPath: "/apis/" + benchAppGV.String(),
		newObject:        func() crclient.Object { return &BenchApp{} },
		create:           applyBenchApp,
		update:           setBenchAppGen,
		gen:              benchAppGen,
		markerInMetadata: true,
		setup: func(ctx context.Context, cs kubernetes.Interface) error {
			return installCRD(ctx, cs, benchAppCRD())
		},
	},
}

func workloadNames() string {
	return "configmaps, pods, crs"
}

func configMapGen(obj runtime.Object) string {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		return cm.Data["gen"]
	}
	return ""
}

// applyPod writes a Pod as a real cluster stores it: its spec applied by
// the workload's controller, its sidecar's metadata by an injector, its
// status by the kubelet, each a field manager of its own (so the object
// carries three managedFields entries).
func applyPod(ctx context.Context, cs kubernetes.Interface, ns, name string, i int) error {
	pods := cs.CoreV1().Pods(ns)
	steps := []struct {
		manager string
		body    map[string]any
		sub     []string
	}{
		{"deployment-controller", podSpecApply(ns, name, i), nil},
		{"sidecar-injector", podSidecarApply(ns, name), nil},
		{"kubelet", podStatusApply(ns, name, i), []string{"status"}},
	}
	for _, s := range steps {
		data, err := json.Marshal(s.body)
		if err != nil {
			return err
		}
		force := true
		_, err = pods.Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: s.manager, Force: &force}, s.sub...)
		if err != nil {
			return fmt.Errorf("%s applying %s: %w", s.manager, name, err)
		}
	}
	return nil
}

func podHeader(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "namespace": ns}}
}

func podSpecApply(ns, name string, i int) map[string]any {
	p := podHeader(ns, name)
	meta := p["metadata"].(map[string]any)
	meta["labels"] = map[string]any{
		"app": "bench", "app.kubernetes.io/name": "shop", "app.kubernetes.io/component": "api",
		"app.kubernetes.io/part-of": "storefront", "pod-template-hash": "7d9f8b6c5d", "version": "v1.14.2",
	}
	meta["ownerReferences"] = []any{map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "shop-api-7d9f8b6c5d",
		"uid": "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", "controller": true, "blockOwnerDeletion": true,
	}}
	p["spec"] = map[string]any{
		"nodeName":                      fmt.Sprintf("node-%03d", i%100),
		"serviceAccountName":            "shop-api",
		"terminationGracePeriodSeconds": 30,
		"dnsPolicy":                     "ClusterFirst",
		"restartPolicy":                 "Always",
		"schedulerName":                 "default-scheduler",
		"priority":                      0,
		"enableServiceLinks":            true,
		"securityContext":               map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 2000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"initContainers":                []any{container("init-schema", "registry.example.com/shop/migrate:v1.14.2", 2, false)},
		"containers": []any{
			container("api", "registry.example.com/shop/api:v1.14.2", 8, true),
			container("istio-proxy", "docker.io/istio/proxyv2:1.24.1", 2, true),
		},
		"volumes": []any{
			map[string]any{"name": "config", "configMap": map[string]any{"name": "shop-api-config", "defaultMode": 420}},
			map[string]any{"name": "tls", "secret": map[string]any{"secretName": "shop-api-tls", "defaultMode": 420}},
			map[string]any{"name": "cache", "emptyDir": map[string]any{"sizeLimit": "1Gi"}},
			map[string]any{"name": "kube-api-access", "projected": map[string]any{"defaultMode": 420, "sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"expirationSeconds": 3607, "path": "token"}},
				map[string]any{"configMap": map[string]any{"name": "kube-root-ca.crt", "items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
				map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{"path": "namespace", "fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}},
			}}},
		},
		"tolerations": []any{
			map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
			map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
		},
		"affinity": map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
			"weight": 100, "podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname",
				"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "shop", "app.kubernetes.io/component": "api"}}},
		}}}},
	}
	return p
}

// container returns a container with env variables, mounts, resources and,
// for long-running ones, probes: what makes a real Pod's spec large.
func container(name, image string, envs int, probes bool) map[string]any {
	env := make([]any, 0, envs)
	for e := range envs {
		key := fmt.Sprintf("%s_SETTING_%02d", strings.ToUpper(strings.ReplaceAll(name, "-", "_")), e)
		if e%4 == 3 {
			env = append(env, map[string]any{"name": key, "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "shop-api-config", "key": strings.ToLower(key)}}})
			continue
		}
		env = append(env, map[string]any{"name": key, "value": fmt.Sprintf("value-of-%s-for-the-benchmark", strings.ToLower(key))})
	}
	c := map[string]any{
		"name": name, "image": image, "imagePullPolicy": "IfNotPresent",
		"args": []any{"--config=/etc/shop/config.yaml", "--log-format=json", "--metrics-addr=:9090"},
		"env":  env,
		"ports": []any{
			map[string]any{"name": "http", "containerPort": 8080, "protocol": "TCP"},
			map[string]any{"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
		},
		"resources": map[string]any{
			"requests": map[string]any{"cpu": "250m", "memory": "256Mi"},
			"limits":   map[string]any{"cpu": "1", "memory": "512Mi"},
		},
		"volumeMounts": []any{
			map[string]any{"name": "config", "mountPath": "/etc/shop", "readOnly": true},
			map[string]any{"name": "tls", "mountPath": "/etc/tls", "readOnly": true},
			map[string]any{"name": "cache", "mountPath": "/var/cache/shop"},
			map[string]any{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true},
		},
		"securityContext": map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
			"capabilities": map[string]any{"drop": []any{"ALL"}}},
		"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
	}
	switch name {
	case "init-schema":
		delete(c, "ports")
	case "istio-proxy":
		// The ports must be unique across the Pod's containers.
		c["ports"] = []any{map[string]any{"name": "http-envoy-prom", "containerPort": 15090, "protocol": "TCP"}}
	}
	if probes {
		probe := func(path string, delay int) map[string]any {
			return map[string]any{"httpGet": map[string]any{"path": path, "port": 8080, "scheme": "HTTP"},
				"initialDelaySeconds": delay, "periodSeconds": 10, "timeoutSeconds": 2, "successThreshold": 1, "failureThreshold": 3}
		}
		c["readinessProbe"] = probe("/healthz/ready", 5)
		c["livenessProbe"] = probe("/healthz/live", 15)
	}
	return c
}

// podSidecarApply is what a sidecar injector's manager owns: annotations
// and labels describing the injected proxy.
func podSidecarApply(ns, name string) map[string]any {
	p := podHeader(ns, name)
	meta := p["metadata"].(map[string]any)
	meta["labels"] = map[string]any{"security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": "shop-api", "service.istio.io/canonical-revision": "v1"}
	meta["annotations"] = map[string]any{
		"sidecar.istio.io/status":                 `{"initContainers":null,"containers":["istio-proxy"],"volumes":["workload-socket","credential-socket","workload-certs","istio-envoy","istio-data","istio-podinfo","istio-token","istiod-ca-cert"],"imagePullSecrets":null,"revision":"default"}`,
		"prometheus.io/scrape":                    "true",
		"prometheus.io/port":                      "15020",
		"prometheus.io/path":                      "/stats/prometheus",
		"kubectl.kubernetes.io/default-container": "api",
		"istio.io/rev":                            "default",
	}
	return p
}

// podStatusApply is what the kubelet reports: conditions, IPs and one
// status per container.
func podStatusApply(ns, name string, i int) map[string]any {
	p := podHeader(ns, name)
	const at = "2026-11-20T10:00:00Z"
	cond := func(t string) map[string]any {
		return map[string]any{"type": t, "status": "True", "lastTransitionTime": at}
	}
	ip := fmt.Sprintf("10.%d.%d.%d", 1+i/65536, (i/256)%256, i%256)
	statuses := []any{}
	for _, c := range []string{"api", "istio-proxy"} {
		statuses = append(statuses, map[string]any{
			"name": c, "ready": true, "started": true, "restartCount": 0,
			"image": "registry.example.com/shop/" + c + ":v1.14.2", "imageID": "registry.example.com/shop/" + c + "@sha256:3f1e8a4b6c2d9e0f7a5b1c3d8e2f4a6b9c0d1e3f5a7b8c2d4e6f9a0b1c3d5e7f",
			"containerID": "containerd://8c1f2e3d4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d",
			"state":       map[string]any{"running": map[string]any{"startedAt": at}},
		})
	}
	p["status"] = map[string]any{
		"phase":             "Running",
		"conditions":        []any{cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")},
		"hostIP":            "192.168.0.10",
		"hostIPs":           []any{map[string]any{"ip": "192.168.0.10"}},
		"podIP":             ip,
		"podIPs":            []any{map[string]any{"ip": ip}},
		"startTime":         at,
		"qosClass":          "Burstable",
		"containerStatuses": statuses,
		"initContainerStatuses": []any{map[string]any{
			"name": "init-schema", "ready": true, "restartCount": 0, "image": "registry.example.com/shop/migrate:v1.14.2",
			"imageID": "registry.example.com/shop/migrate@sha256:9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
			"state":   map[string]any{"terminated": map[string]any{"exitCode": 0, "reason": "Completed", "startedAt": at, "finishedAt": at}},
		}},
	}
	return p
}
