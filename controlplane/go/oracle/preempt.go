package main

// The scheduler's preemption for one pod: the Filter stage as a scheduling cycle runs it (with
// nominated pods), then DefaultPreemption's own Evaluator: PodEligibleToPreemptOthers,
// DryRunPreemption over the nodes whose status is Unschedulable (SelectVictimsOnNode and its
// PDB violation counting on every one of them) and SelectCandidate (pickOneNodeForPreemption).
// Only the victims' deletion (actuation) is left out.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
)

// nominator holds the pending pods nominated to nodes, as the scheduling queue's nominator does.
type nominator map[string][]fwk.PodInfo

func (n nominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (n nominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (n nominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (n nominator) NominatedPodsForNode(node string) []fwk.PodInfo                { return n[node] }

func newNominator(pods []v1.Pod) (nominator, error) {
	out := nominator{}
	for i := range pods {
		info, err := framework.NewPodInfo(&pods[i])
		if err != nil {
			return nil, err
		}
		node := pods[i].Status.NominatedNodeName
		out[node] = append(out[node], info)
	}
	return out, nil
}

func preemptionArgs() (*config.DefaultPreemptionArgs, error) {
	profile, err := filterProfile()
	if err != nil {
		return nil, err
	}
	for _, pc := range profile.PluginConfig {
		if args, ok := pc.Args.(*config.DefaultPreemptionArgs); ok {
			return args, nil
		}
	}
	return nil, fmt.Errorf("no DefaultPreemptionArgs in the default profile")
}

// filterStage is findNodesThatFitPod's diagnosis: the feasible nodes and every node's status
// (PreFilter rejection for all, "not in the PreFilter result", or the first failing Filter
// plugin with the nominated pods of equal or higher priority added).
func filterStage(ctx context.Context, fw framework.Framework, state fwk.CycleState, pod *v1.Pod) ([]string, *framework.NodeToStatus, error) {
	statuses := framework.NewDefaultNodeToStatus()
	pre, s, plugins := fw.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return nil, nil, s.AsError()
		}
		statuses.SetAbsentNodesStatus(s)
		return nil, statuses, nil
	}
	all, err := fw.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, nil, err
	}
	if !pre.AllNodes() {
		statuses.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(plugins))))
	}
	feasible := []string{}
	for _, info := range all {
		name := info.Node().Name
		if !pre.AllNodes() && !pre.NodeNames.Has(name) {
			continue
		}
		st := fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
		switch {
		case st.IsSuccess():
			feasible = append(feasible, name)
		case st.IsRejected():
			statuses.Set(name, st)
		default:
			return nil, nil, st.AsError()
		}
	}
	return feasible, statuses, nil
}

// preempt answers: feasible nodes, the node statuses, eligibility, every candidate's victims
// (in upstream's order) and PDB violations, and the node SelectCandidate picks.
func preempt(raw json.RawMessage) (any, error) {
	var args struct {
		Pod        v1.Pod // the preemptor, as admitted (spec.priority, preemptionPolicy)
		Nodes      []v1.Node
		Pods       []v1.Pod // pods bound to nodes, as the scheduler's cache holds them
		Nominated  []v1.Pod // pending pods with status.nominatedNodeName (the queue's nominator)
		PDBs       []policyv1.PodDisruptionBudget
		Namespaces []v1.Namespace
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	profile, err := filterProfile()
	if err != nil {
		return nil, err
	}
	dpArgs, err := preemptionArgs()
	if err != nil {
		return nil, err
	}
	nominated, err := newNominator(args.Nominated)
	if err != nil {
		return nil, err
	}
	snapshot, _ := newSnapshot(args.Pods, args.Nodes)
	objects := appendObjects(appendObjects(nil, args.Namespaces), args.PDBs)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var pl *defaultpreemption.DefaultPreemption
	fw, stop, err := startFramework(ctx, profile, snapshot, objects, nominated, func(fw framework.Framework) (err error) {
		fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
		pl, err = defaultpreemption.New(ctx, dpArgs, fw, fts)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer stop()

	pod := &args.Pod
	state := framework.NewCycleState()
	feasible, statuses, err := filterStage(ctx, fw, state, pod)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"feasible": feasible, "statuses": describe(statuses, args.Nodes, feasible)}
	if len(feasible) > 0 {
		return out, nil
	}
	ev := pl.Evaluator
	eligible, reason := ev.PodEligibleToPreemptOthers(ctx, pod, statuses.Get(pod.Status.NominatedNodeName))
	out["eligible"], out["reason"] = eligible, reason
	if !eligible {
		return out, nil
	}
	// findCandidates (unexported): the Unschedulable nodes, all PDBs, a random offset and the
	// number of candidates to find (every node below 100).
	potential, err := statuses.NodesForStatusCode(fw.SnapshotSharedLister().NodeInfos(), fwk.Unschedulable)
	if err != nil {
		return nil, err
	}
	potentialNames := []string{}
	for _, info := range potential {
		potentialNames = append(potentialNames, info.Node().Name)
	}
	sort.Strings(potentialNames)
	out["potential"] = potentialNames
	if len(potential) == 0 {
		return out, nil
	}
	pdbs, err := ev.PdbLister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	offset, number := ev.GetOffsetAndNumCandidates(int32(len(potential)))
	candidates, _, err := ev.DryRunPreemption(ctx, state, pod, potential, pdbs, offset, number)
	if err != nil {
		return nil, err
	}
	found := map[string]any{}
	for _, c := range candidates {
		victims := []string{}
		for _, p := range c.Victims().Pods {
			victims = append(victims, p.Namespace+"/"+p.Name)
		}
		found[c.Name()] = map[string]any{"victims": victims, "numPDBViolations": c.Victims().NumPDBViolations}
	}
	out["candidates"] = found
	if best := ev.SelectCandidate(ctx, candidates); best != nil {
		out["node"] = best.Name()
	}
	return out, nil
}

// describe is every infeasible node's status: its code and the plugin that set it.
func describe(statuses *framework.NodeToStatus, nodes []v1.Node, feasible []string) map[string]any {
	out := map[string]any{}
	for _, n := range nodes {
		if sets.New(feasible...).Has(n.Name) {
			continue
		}
		st := statuses.Get(n.Name)
		out[n.Name] = map[string]any{"code": st.Code().String(), "plugin": st.Plugin(), "reasons": st.Reasons()}
	}
	return out
}
