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
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
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

// The volume and device plugins, in the default profile's order around the others (the filter
// question only: they need the informers and managers startDevices builds).
var volumePlugins = []string{"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}

func filterProfile() (*config.KubeSchedulerProfile, error) {
	return filterProfileOf(filterPlugins)
}

// filterProfileWithVolumesAndDevices is filterProfile plus the volume plugins (after
// NodeResourcesFit) and DynamicResources (last), as the default profile orders them.
func filterProfileWithVolumesAndDevices() (*config.KubeSchedulerProfile, error) {
	var names []string
	for _, name := range filterPlugins {
		names = append(names, name)
		if name == "NodeResourcesFit" {
			names = append(names, volumePlugins...)
		}
	}
	return filterProfileOf(append(names, "DynamicResources"))
}

var withPreFilterToo = map[string]bool{"VolumeRestrictions": true, "NodeVolumeLimits": true, "VolumeBinding": true,
	"DynamicResources": true}

func filterProfileOf(filterPlugins []string) (*config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0].DeepCopy()
	filter, preFilter := config.PluginSet{}, config.PluginSet{}
	for _, name := range filterPlugins {
		filter.Enabled = append(filter.Enabled, config.Plugin{Name: name})
		if withPreFilter[name] || withPreFilterToo[name] {
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

// newSnapshot is the scheduler cache's snapshot of these nodes and the pods bound to them.
func newSnapshot(boundPods []v1.Pod, nodeList []v1.Node) (*cache.Snapshot, []*v1.Node) {
	pods := make([]*v1.Pod, len(boundPods))
	for i := range boundPods {
		pods[i] = &boundPods[i]
	}
	nodes := make([]*v1.Node, len(nodeList))
	for i := range nodeList {
		nodes[i] = &nodeList[i]
	}
	return cache.NewSnapshot(pods, nodes), nodes
}

// appendObjects appends pointers to the items (API objects) for a fake clientset.
func appendObjects[T any, PT interface {
	*T
	runtime.Object
}](out []runtime.Object, items []T) []runtime.Object {
	for i := range items {
		out = append(out, PT(&items[i]))
	}
	return out
}

// startFramework runs the framework runtime for the profile over the snapshot, with a fake
// client holding objects and informers started and synced. before (optional) is called with
// the framework before the informers start, to register further informers (plugins built by
// hand). stop cancels ctx's informers and waits for them.
func startFramework(ctx context.Context, profile *config.KubeSchedulerProfile, snapshot *cache.Snapshot,
	objects []runtime.Object, nominator fwk.PodNominator, before func(framework.Framework) error) (fw framework.Framework, stop func(), err error) {
	return startFrameworkWith(ctx, profile, snapshot, objects, nominator, before, nil)
}

// startFrameworkWith is startFramework with more framework options made from the informer
// factory and client before the framework is built (managers the plugins share).
func startFrameworkWith(ctx context.Context, profile *config.KubeSchedulerProfile, snapshot *cache.Snapshot,
	objects []runtime.Object, nominator fwk.PodNominator, before func(framework.Framework) error,
	more func(context.Context, informers.SharedInformerFactory, *fake.Clientset) ([]frameworkruntime.Option, error)) (fw framework.Framework, stop func(), err error) {
	metrics.Register() // the framework records plugin metrics (idempotent)
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	options := []frameworkruntime.Option{frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithInformerFactory(factory), frameworkruntime.WithClientSet(client)}
	if nominator != nil {
		options = append(options, frameworkruntime.WithPodNominator(nominator))
	}
	ctx, cancel := context.WithCancel(ctx)
	if more != nil {
		extra, err := more(ctx, factory, client)
		if err != nil {
			cancel()
			return nil, nil, err
		}
		options = append(options, extra...)
	}
	fw, err = frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), profile, options...)
	if err == nil && before != nil {
		err = before(fw)
	}
	if err != nil {
		cancel()
		return nil, nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return fw, func() { cancel(); factory.Shutdown() }, nil
}

// schedulerFilter answers, per node: fits, or the first failing plugin and its reasons.
func schedulerFilter(raw json.RawMessage) (any, error) {
	var args struct {
		Pod        v1.Pod
		Nodes      []v1.Node
		Pods       []v1.Pod       // pods already bound to nodes (spec.nodeName)
		Namespaces []v1.Namespace // for namespaceSelector (the plugin lists them from an informer)
		Remove     []string       // "namespace/name" of bound pods taken off their nodes after PreFilter
		storageAndDevices
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	profile, err := filterProfileWithVolumesAndDevices()
	if err != nil {
		return nil, err
	}
	snapshot, nodes := newSnapshot(args.Pods, args.Nodes)
	objects := append(appendObjects(nil, args.Namespaces), args.storageAndDevices.objects()...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var dra devices
	fw, stop, err := startFrameworkWith(ctx, profile, snapshot, objects, nil, nil, dra.start)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := dra.synced(ctx, len(args.ResourceClaims), len(args.ResourceSlices)); err != nil {
		return nil, err
	}

	state := framework.NewCycleState()
	pre, preStatus, _ := fw.RunPreFilterPlugins(ctx, state, &args.Pod)
	if preStatus.IsSuccess() {
		if err := removePods(ctx, fw, state, &args.Pod, snapshot, args.Pods, args.Remove); err != nil {
			return nil, err
		}
	}
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

// removePods takes the named pods off their nodes as preemption's dry run does (SelectVictimsOnNode):
// NodeInfo.RemovePod, then the PreFilter extensions' RemovePod on the cycle state.
func removePods(ctx context.Context, fw framework.Framework, state fwk.CycleState, pod *v1.Pod,
	snapshot *cache.Snapshot, pods []v1.Pod, remove []string) error {
	gone := sets.New(remove...)
	for i := range pods {
		p := &pods[i]
		if !gone.Has(p.Namespace + "/" + p.Name) {
			continue
		}
		info, err := snapshot.NodeInfos().Get(p.Spec.NodeName)
		if err != nil {
			return err
		}
		podInfo, err := framework.NewPodInfo(p)
		if err != nil {
			return err
		}
		if err := info.RemovePod(klog.FromContext(ctx), p); err != nil {
			return err
		}
		if st := fw.RunPreFilterExtensionRemovePod(ctx, state, pod, podInfo, info); !st.IsSuccess() {
			return st.AsError()
		}
	}
	return nil
}
