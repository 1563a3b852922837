// capi-drain: Cluster API v1.14.2's Machine drain, run against a real API server (tests only).
//
//	capi-drain --kubeconfig PATH --node NAME [--input FILE] [--horizon SECONDS] [--settle DURATION]
//
// It repeats what the Machine controller does while a Machine is deleted
// (core/reconcilers/machine/machine_controller.go: reconcileDelete, isNodeDrainAllowed,
// nodeDrainTimeoutExceeded, drainNode) with the upstream drain helper
// (core/reconcilers/machine/drain: Helper.CordonNode, GetPodsForEviction, EvictPods): one pass per
// reconcile, passes drainRetryInterval (20 s) apart. Time is the controller's: pass k happens at
// k*20 s after the drain started; between passes the program waits (up to --settle) for the pods
// it evicted to leave, as a kubelet would within one interval. The MachineDrainRules live in an
// in-memory management client (only they are read through it); pods, PDBs, namespaces, DaemonSets
// and the node come from the API server, where evictions are real.
//
// --input is JSON: {"cluster": Cluster, "machine": Machine, "machineDrainRules": [MachineDrainRule]}
// (cluster.x-k8s.io/v1beta2 objects; all optional). The answer is one JSON object on stdout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/noderefutil"
	"sigs.k8s.io/cluster-api/core/reconcilers/machine/drain"
)

// drainRetryInterval is machine_controller.go's drainRetryInterval.
const drainRetryInterval = 20 * time.Second

type input struct {
	Cluster           *clusterv1.Cluster           `json:"cluster"`
	Machine           *clusterv1.Machine           `json:"machine"`
	MachineDrainRules []clusterv1.MachineDrainRule `json:"machineDrainRules"`
}

type pass struct {
	AtSeconds            int                 `json:"atSeconds"`
	Evicted              []string            `json:"evicted"`
	FailedEviction       map[string][]string `json:"failedEviction"`
	DeletionTimestampSet []string            `json:"deletionTimestampSet"`
	EvictionLater        []string            `json:"evictionLater"`
	WaitCompletedNow     []string            `json:"waitCompletedNow"`
	WaitCompletedLater   []string            `json:"waitCompletedLater"`
	Ignored              []string            `json:"ignored"`
	ConditionMessage     string              `json:"conditionMessage"`
}

type answer struct {
	Node string `json:"node"`
	// Outcome: completed (the drain finished), timeout (nodeDrainTimeout exceeded: the Machine
	// controller goes on to delete the Machine with what is left), excluded (exclude-node-draining:
	// no drain at all), stalled (still draining at the horizon).
	Outcome     string   `json:"outcome"`
	AtSeconds   int      `json:"atSeconds"`
	Unreachable bool     `json:"unreachable"`
	Cordoned    bool     `json:"cordoned"`
	Evicted     []string `json:"evicted"`
	Skipped     []string `json:"skipped"`
	Left        []string `json:"left"`
	Passes      []pass   `json:"passes"`
}

func main() {
	// Own flag set: controller-runtime registers a global --kubeconfig.
	fs := flag.NewFlagSet("capi-drain", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the workload cluster")
	nodeName := fs.String("node", "", "the Machine's node")
	inputPath := fs.String("input", "", "JSON file: cluster, machine, machineDrainRules")
	horizon := fs.Int("horizon", 600, "stop after this many controller seconds (outcome stalled)")
	settle := fs.Duration("settle", 30*time.Second, "wall time to wait for evicted pods to leave between passes")
	_ = fs.Parse(os.Args[1:])
	klog.SetOutput(os.Stderr)
	if *kubeconfig == "" || *nodeName == "" {
		fail(fmt.Errorf("--kubeconfig and --node are required"))
	}
	in := input{}
	if *inputPath != "" {
		data, err := os.ReadFile(*inputPath)
		if err != nil {
			fail(err)
		}
		if err := json.Unmarshal(data, &in); err != nil {
			fail(fmt.Errorf("--input: %w", err))
		}
	}
	ans, err := run(context.Background(), *kubeconfig, *nodeName, in, *horizon, *settle)
	if err != nil {
		fail(err)
	}
	out, _ := json.Marshal(ans)
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "capi-drain: error:", err)
	os.Exit(1)
}

func run(ctx context.Context, kubeconfig, nodeName string, in input, horizon int, settle time.Duration) (*answer, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	remote, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	objs := []client.Object{}
	for i := range in.MachineDrainRules {
		objs = append(objs, &in.MachineDrainRules[i])
	}
	mgmt := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()

	cluster, machine := in.Cluster, in.Machine
	if cluster == nil {
		cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "oracle", Namespace: metav1.NamespaceDefault}}
	}
	if machine == nil {
		machine = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "oracle", Namespace: cluster.Namespace}}
	}
	start := time.Now()
	machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: nodeName}
	machine.Status.Deletion = &clusterv1.MachineDeletionStatus{NodeDrainStartTime: metav1.NewTime(start)}

	ans := &answer{Node: nodeName, Evicted: []string{}, Skipped: []string{}, Left: []string{}, Passes: []pass{}}
	// isNodeDrainAllowed: the exclude-node-draining annotation turns the drain off.
	if _, ok := machine.Annotations[clusterv1.ExcludeNodeDrainingAnnotation]; ok {
		ans.Outcome = "excluded"
		return ans, nil
	}
	for at := 0; ; at += int(drainRetryInterval.Seconds()) {
		if nodeDrainTimeoutExceeded(machine, start.Add(time.Duration(at)*time.Second)) {
			ans.Outcome, ans.AtSeconds = "timeout", at
			return ans, leftOn(ctx, mgmt, remote, cluster, machine, nodeName, ans)
		}
		if at > horizon {
			ans.Outcome, ans.AtSeconds = "stalled", at-int(drainRetryInterval.Seconds())
			return ans, leftOn(ctx, mgmt, remote, cluster, machine, nodeName, ans)
		}
		done, evicted, err := drainPass(ctx, mgmt, remote, cluster, machine, nodeName, at, ans)
		if err != nil {
			return nil, err
		}
		if done {
			ans.Outcome, ans.AtSeconds = "completed", at
			return ans, nil
		}
		waitGone(ctx, remote, evicted, settle)
	}
}

// drainPass is machine_controller.go drainNode: cordon, list, evict; true when the drain completed.
func drainPass(ctx context.Context, mgmt, remote client.Client, cluster *clusterv1.Cluster, machine *clusterv1.Machine,
	nodeName string, at int, ans *answer) (bool, []*corev1.Pod, error) {
	node := &corev1.Node{}
	if err := remote.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return false, nil, err
	}
	drainer := &drain.Helper{Client: mgmt, RemoteClient: remote, GracePeriodSeconds: -1}
	if noderefutil.IsNodeUnreachable(node) {
		drainer.SkipWaitForDeleteTimeoutSeconds = 1
		drainer.GracePeriodSeconds = 1
		ans.Unreachable = true
	}
	if err := drainer.CordonNode(ctx, node); err != nil {
		return false, nil, err
	}
	ans.Cordoned = true
	list, err := drainer.GetPodsForEviction(ctx, cluster, machine, nodeName)
	if err != nil {
		return false, nil, err
	}
	ans.Skipped = names(list.SkippedPods())
	if len(list.Pods()) == 0 {
		return true, nil, nil
	}
	already := map[string]bool{}
	for _, p := range list.Pods() {
		if !p.DeletionTimestamp.IsZero() {
			already[key(p)] = true
		}
	}
	res := drainer.EvictPods(ctx, list)
	p := pass{AtSeconds: at, Evicted: []string{}, FailedEviction: map[string][]string{},
		DeletionTimestampSet: names(res.PodsDeletionTimestampSet), EvictionLater: names(res.PodsToTriggerEvictionLater),
		WaitCompletedNow: names(res.PodsToWaitCompletedNow), WaitCompletedLater: names(res.PodsToWaitCompletedLater),
		Ignored: names(res.PodsIgnored)}
	evicted := []*corev1.Pod{}
	for _, pod := range res.PodsDeletionTimestampSet {
		if !already[key(pod)] {
			p.Evicted = append(p.Evicted, key(pod))
			evicted = append(evicted, pod)
		}
	}
	ans.Evicted = append(ans.Evicted, p.Evicted...)
	for msg, pods := range res.PodsFailedEviction {
		p.FailedEviction[msg] = names(pods)
	}
	if !res.DrainCompleted() {
		p.ConditionMessage = res.ConditionMessage(machine.Status.Deletion.NodeDrainStartTime)
	}
	ans.Passes = append(ans.Passes, p)
	return res.DrainCompleted(), append(evicted, res.PodsDeletionTimestampSet...), nil
}

// nodeDrainTimeoutExceeded is machine_controller.go nodeDrainTimeoutExceeded with the controller's
// time passed in (upstream reads time.Now()).
func nodeDrainTimeoutExceeded(machine *clusterv1.Machine, now time.Time) bool {
	if machine.Status.Deletion == nil || machine.Spec.Deletion.NodeDrainTimeoutSeconds == nil || *machine.Spec.Deletion.NodeDrainTimeoutSeconds <= 0 {
		return false
	}
	if machine.Status.Deletion.NodeDrainStartTime.IsZero() {
		return false
	}
	diff := now.Sub(machine.Status.Deletion.NodeDrainStartTime.Time)
	return diff.Seconds() >= float64(*machine.Spec.Deletion.NodeDrainTimeoutSeconds)
}

// leftOn records the pods the drain still had to remove when it ended.
func leftOn(ctx context.Context, mgmt, remote client.Client, cluster *clusterv1.Cluster, machine *clusterv1.Machine, nodeName string, ans *answer) error {
	drainer := &drain.Helper{Client: mgmt, RemoteClient: remote}
	list, err := drainer.GetPodsForEviction(ctx, cluster, machine, nodeName)
	if err != nil {
		return err
	}
	ans.Left = names(list.Pods())
	return nil
}

// waitGone waits (up to settle) until the given pods have left the API server.
func waitGone(ctx context.Context, remote client.Client, pods []*corev1.Pod, settle time.Duration) {
	deadline := time.Now().Add(settle)
	for _, pod := range pods {
		for time.Now().Before(deadline) {
			now := &corev1.Pod{}
			err := remote.Get(ctx, client.ObjectKeyFromObject(pod), now)
			if (err != nil && client.IgnoreNotFound(err) == nil) || (err == nil && now.UID != pod.UID) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func key(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

func names(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, key(p))
	}
	sort.Strings(out)
	return out
}
