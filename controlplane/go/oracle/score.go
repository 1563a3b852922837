package main

// The scheduler's Score stage for one pod with the default profile (every default plugin, its
// default arguments and weights): PreFilter and Filter pick the feasible nodes, then PreScore
// and Score run through the framework runtime, which normalizes each plugin's scores, applies
// its weight and sums them. The answer is the full table and the nodes with the highest total
// (the scheduler picks one of them at random).

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The default profile's Score plugins that judge a node from a snapshot (DynamicResources and
// VolumeBinding need their own managers and are left out, as the Filter question does).
var scorePlugins = []string{"TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread",
	"InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"}

var withPreScore = map[string]bool{"TaintToleration": true, "NodeAffinity": true, "NodeResourcesFit": true,
	"PodTopologySpread": true, "InterPodAffinity": true, "NodeResourcesBalancedAllocation": true}

// scoreProfile is the Filter question's profile plus the Score plugins, weighted as the default profile.
func scoreProfile() (*config.KubeSchedulerProfile, map[string]int32, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, nil, err
	}
	weights := map[string]int32{}
	for _, p := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		weights[p.Name] = p.Weight
	}
	profile, err := filterProfile()
	if err != nil {
		return nil, nil, err
	}
	for _, name := range scorePlugins {
		profile.Plugins.Score.Enabled = append(profile.Plugins.Score.Enabled, config.Plugin{Name: name, Weight: weights[name]})
		if withPreScore[name] {
			profile.Plugins.PreScore.Enabled = append(profile.Plugins.PreScore.Enabled, config.Plugin{Name: name})
		}
	}
	out := map[string]int32{}
	for _, name := range scorePlugins {
		out[name] = weights[name]
	}
	return profile, out, nil
}

func schedulerScore(raw json.RawMessage) (any, error) {
	var args struct {
		Pod        v1.Pod
		Nodes      []v1.Node
		Pods       []v1.Pod       // pods already bound to nodes (spec.nodeName)
		Namespaces []v1.Namespace // for namespaceSelector
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	profile, weights, err := scoreProfile()
	if err != nil {
		return nil, err
	}
	snapshot, nodes := newSnapshot(args.Pods, args.Nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fw, stop, err := startFramework(ctx, profile, snapshot, appendObjects(nil, args.Namespaces), nil, nil)
	if err != nil {
		return nil, err
	}
	defer stop()

	state := framework.NewCycleState()
	pre, preStatus, _ := fw.RunPreFilterPlugins(ctx, state, &args.Pod)
	if !preStatus.IsSuccess() {
		return map[string]any{"feasible": []string{}, "unschedulable": preStatus.Plugin() + ": " + preStatus.Message()}, nil
	}
	feasible := []fwk.NodeInfo{}
	for _, node := range nodes {
		if !pre.AllNodes() && !pre.NodeNames.Has(node.Name) {
			continue
		}
		info, err := snapshot.NodeInfos().Get(node.Name)
		if err != nil {
			return nil, err
		}
		if fw.RunFilterPlugins(ctx, state, &args.Pod, info).IsSuccess() {
			feasible = append(feasible, info)
		}
	}
	names := []string{}
	for _, info := range feasible {
		names = append(names, info.Node().Name)
	}
	if len(feasible) == 0 {
		return map[string]any{"feasible": names}, nil
	}
	if st := fw.RunPreScorePlugins(ctx, state, &args.Pod, feasible); !st.IsSuccess() {
		return nil, st.AsError()
	}
	scores, st := fw.RunScorePlugins(ctx, state, &args.Pod, feasible)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	table := map[string]any{}
	best := int64(-1)
	for _, ns := range scores {
		plugins := map[string]int64{}
		for _, s := range ns.Scores {
			plugins[s.Name] = s.Score // normalized and weighted
		}
		table[ns.Name] = map[string]any{"total": ns.TotalScore, "plugins": plugins}
		if ns.TotalScore > best {
			best = ns.TotalScore
		}
	}
	top := []string{}
	for _, ns := range scores {
		if ns.TotalScore == best {
			top = append(top, ns.Name)
		}
	}
	sort.Strings(top)
	return map[string]any{"feasible": names, "scores": table, "best": top, "weights": weights}, nil
}
