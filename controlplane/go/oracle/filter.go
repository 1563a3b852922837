package main

// The scheduler's Filter stage for one pod: the default profile's PreFilter and Filter plugins
// that judge a node from a snapshot (node name, unschedulable, taints, node affinity, host
// ports, resources, inter-pod affinity, topology spread), run by the framework runtime over a
// cache snapshot, with their default arguments from the default configuration.

import (
	"context"
	"encoding/json"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// In the default profile's order (the first failing plugin decides the node's status).
var filterPlugins = []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
	"NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"}

var withPreFilter = map[string]bool{"NodeAffinity": true, "NodePorts": true, "NodeResourcesFit": true,
	"InterPodAffinity": true, "PodTopologySpread": true}

func filterProfile() (*config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0].DeepCopy()
	filter, preFilter := config.PluginSet{}, config.PluginSet{}
	for _, name := range filterPlugins {
		filter.Enabled = append(filter.Enabled, config.Plugin{Name: name})
		if withPreFilter[name] {
			preFilter.Enabled = append(preFilter.Enabled, config.Plugin{Name: name})
		}
	}
	profile.Plugins = &config.Plugins{
		QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: "PrioritySort"}}},
		PreFilter: preFilter, Filter: filter,
		Bind: config.PluginSet{Enabled: []config.Plugin{{Name: "DefaultBinder"}}},
	}
	return profile, nil
}

// schedulerFilter answers, per node: fits, or the first failing plugin and its reasons.
func schedulerFilter(raw json.RawMessage) (any, error) {
	var args struct {
		Pod        v1.Pod
		Nodes      []v1.Node
		Pods       []v1.Pod       // pods already bound to nodes (spec.nodeName)
		Namespaces []v1.Namespace // for namespaceSelector (the plugin lists them from an informer)
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	profile, err := filterProfile()
	if err != nil {
		return nil, err
	}
	metrics.Register() // the framework records plugin metrics (idempotent)
	pods := make([]*v1.Pod, len(args.Pods))
	for i := range args.Pods {
		pods[i] = &args.Pods[i]
	}
	nodes := make([]*v1.Node, len(args.Nodes))
	for i := range args.Nodes {
		nodes[i] = &args.Nodes[i]
	}
	snapshot := cache.NewSnapshot(pods, nodes)
	objects := []runtime.Object{}
	for i := range args.Namespaces {
		objects = append(objects, &args.Namespaces[i])
	}
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	fw, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithSnapshotSharedLister(snapshot), frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithClientSet(client))
	if err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	factory.WaitForCacheSync(ctx.Done())

	state := framework.NewCycleState()
	pre, preStatus, _ := fw.RunPreFilterPlugins(ctx, state, &args.Pod)
	out := map[string]any{}
	for _, node := range nodes {
		info, err := snapshot.NodeInfos().Get(node.Name)
		if err != nil {
			return nil, err
		}
		verdict := map[string]any{"fits": true}
		switch {
		case !preStatus.IsSuccess():
			verdict = map[string]any{"fits": false, "plugin": preStatus.Plugin(), "reasons": preStatus.Reasons(), "stage": "PreFilter"}
		case !pre.AllNodes() && !pre.NodeNames.Has(node.Name):
			verdict = map[string]any{"fits": false, "plugin": "", "reasons": []string{"not in the PreFilter result"}, "stage": "PreFilter"}
		default:
			if st := fw.RunFilterPlugins(ctx, state, &args.Pod, info); !st.IsSuccess() { // no nominated pods
				verdict = map[string]any{"fits": false, "plugin": st.Plugin(), "reasons": st.Reasons(), "stage": "Filter"}
			}
		}
		out[node.Name] = verdict
	}
	return out, nil
}
