// karpenter-drain: Karpenter v1.14.1's node termination drain, run against a real API server (tests only).
//
//	karpenter-drain --kubeconfig PATH --node NAME [--termination-grace-period SECONDS] [--horizon SECONDS]
//
// It repeats what the termination controller does for a node being deleted
// (pkg/controllers/node/termination/controller.go: finalize, awaitDrain) with the upstream
// terminator and eviction queue (pkg/controllers/node/termination/terminator: Terminator.Taint,
// Terminator.Drain, Queue.Reconcile): taint karpenter.sh/disrupted:NoSchedule, then one Drain per
// reconcile, 1 s apart (awaitDrain's RequeueAfter), each followed by the queue's evictions. Time is
// the controller's: a fake clock starts now and steps 1 s per reconcile, so a termination grace
// period of minutes runs in seconds; between reconciles the program waits (up to --settle) for the
// pods it evicted or deleted to leave, as a kubelet would. Pods, PDBs and the node live in the API
// server, where evictions and deletions are real. The eviction queue's own controller (rate-limited
// retries 100 ms .. 10 s) is replaced by reconciling every queued pod after each Drain: the same
// requests in the same order, retried once per second.
//
// The answer is one JSON object on stdout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/node/termination/terminator"
	"sigs.k8s.io/karpenter/pkg/events"
	nodeutils "sigs.k8s.io/karpenter/pkg/utils/node"
)

// requeue is awaitDrain's RequeueAfter while pods remain.
const requeue = time.Second

type timed struct {
	Pod       string `json:"pod"`
	AtSeconds int    `json:"atSeconds"`
}

type forced struct {
	Pod                string `json:"pod"`
	AtSeconds          int    `json:"atSeconds"`
	GracePeriodSeconds int    `json:"gracePeriodSeconds"`
}

type answer struct {
	Node string `json:"node"`
	// Outcome: drained (Drain returned no error: the node goes on to volume detachment and
	// instance termination) or stalled (still draining at the horizon).
	Outcome   string `json:"outcome"`
	AtSeconds int    `json:"atSeconds"`
	// Enqueued: the groups in the order Drain handed them to the eviction queue.
	Enqueued     [][]string        `json:"enqueued"`
	EnqueuedAt   []int             `json:"enqueuedAt"`
	Evicted      []timed           `json:"evicted"`
	ForceDeleted []forced          `json:"forceDeleted"`
	Blocked      map[string]string `json:"blocked"`
	// Left: pods still on the node when the drain ended (those it never waits for, or all when stalled).
	Left []string `json:"left"`
}

// recorder keeps the events the terminator publishes.
type recorder struct{ events []events.Event }

func (r *recorder) Publish(evts ...events.Event) { r.events = append(r.events, evts...) }

var granted = regexp.MustCompile(`granted (\d+) seconds`)

func main() {
	// Own flag set: controller-runtime registers a global --kubeconfig.
	fs := flag.NewFlagSet("karpenter-drain", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster")
	nodeName := fs.String("node", "", "the node being terminated")
	tgp := fs.Int("termination-grace-period", -1, "the NodeClaim's terminationGracePeriod in seconds (-1: unset)")
	horizon := fs.Int("horizon", 300, "stop after this many controller seconds (outcome stalled)")
	settle := fs.Duration("settle", 30*time.Second, "wall time to wait for evicted pods to leave between reconciles")
	_ = fs.Parse(os.Args[1:])
	log.SetLogger(logr.Discard())
	if *kubeconfig == "" || *nodeName == "" {
		fail(fmt.Errorf("--kubeconfig and --node are required"))
	}
	ans, err := run(context.Background(), *kubeconfig, *nodeName, *tgp, *horizon, *settle)
	if err != nil {
		fail(err)
	}
	out, _ := json.Marshal(ans)
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "karpenter-drain: error:", err)
	os.Exit(1)
}

func run(ctx context.Context, kubeconfig, nodeName string, tgp, horizon int, settle time.Duration) (*answer, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	kube, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	clk := clocktesting.NewFakeClock(start)
	rec := &recorder{}
	queue := terminator.NewQueue(kube, rec)
	term := terminator.NewTerminator(clk, kube, queue, rec)
	// nodeTerminationTime: the NodeClaim's deletion time plus its terminationGracePeriod
	// (nodeclaim/lifecycle: the termination-timestamp annotation); nil when unset.
	var deadline *time.Time
	if tgp >= 0 {
		d := start.Add(time.Duration(tgp) * time.Second)
		deadline = &d
	}
	ans := &answer{Node: nodeName, Enqueued: [][]string{}, EnqueuedAt: []int{}, Evicted: []timed{},
		ForceDeleted: []forced{}, Blocked: map[string]string{}, Left: []string{}}
	enqueued := map[string]bool{}
	for at := 0; ; at += int(requeue.Seconds()) {
		node := &corev1.Node{}
		if err := kube.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
			return nil, err
		}
		if at == 0 {
			if err := term.Taint(ctx, node, v1.DisruptedNoScheduleTaint); err != nil {
				return nil, err
			}
		}
		seen := len(rec.events)
		err := term.Drain(ctx, node, deadline)
		if err != nil && !terminator.IsNodeDrainError(err) {
			return nil, err
		}
		pods, lerr := nodeutils.GetPods(ctx, kube, node)
		if lerr != nil {
			return nil, lerr
		}
		if err == nil {
			ans.Outcome, ans.AtSeconds = "drained", at
			ans.Left = names(pods)
			return ans, nil
		}
		if at >= horizon {
			ans.Outcome, ans.AtSeconds = "stalled", at
			ans.Left = names(pods)
			return ans, nil
		}
		group := []string{}
		gone := []*corev1.Pod{}
		for _, pod := range pods {
			k := pod.Namespace + "/" + pod.Name
			if queue.Has(pod) && !enqueued[k] {
				enqueued[k] = true
				group = append(group, k)
			}
			if queue.Has(pod) {
				if _, err := queue.Reconcile(ctx, pod); err != nil {
					return nil, err
				}
			}
		}
		if len(group) > 0 {
			sort.Strings(group)
			ans.Enqueued = append(ans.Enqueued, group)
			ans.EnqueuedAt = append(ans.EnqueuedAt, at)
		}
		for _, evt := range rec.events[seen:] {
			pod, ok := evt.InvolvedObject.(*corev1.Pod)
			if !ok {
				continue
			}
			k := pod.Namespace + "/" + pod.Name
			switch evt.Reason {
			case events.Evicted:
				ans.Evicted = append(ans.Evicted, timed{Pod: k, AtSeconds: at})
				delete(ans.Blocked, k)
				gone = append(gone, pod)
			case events.Disrupted:
				grace := 0
				if m := granted.FindStringSubmatch(evt.Message); m != nil {
					grace, _ = strconv.Atoi(m[1])
				}
				ans.ForceDeleted = append(ans.ForceDeleted, forced{Pod: k, AtSeconds: at, GracePeriodSeconds: grace})
				gone = append(gone, pod)
			}
		}
		for _, evt := range rec.events[seen:] {
			if evt.Reason != events.FailedDraining {
				continue
			}
			for _, pod := range pods {
				k := pod.Namespace + "/" + pod.Name
				if m := blockedPod.FindStringSubmatch(evt.Message); m != nil && m[2] == k {
					ans.Blocked[k] = m[1]
				}
			}
		}
		waitGone(ctx, kube, gone, settle)
		clk.Step(requeue)
	}
}

// blockedPod reads the eviction queue's NodeFailedToDrain message: the reason and the pod.
var blockedPod = regexp.MustCompile(`Failed to drain node, (evicting pod violates a PDB|eviction does not support multiple PDBs) \(Pod=([^)]+)\)`)

// waitGone waits (up to settle) until the given pods have left the API server.
func waitGone(ctx context.Context, kube client.Client, pods []*corev1.Pod, settle time.Duration) {
	deadline := time.Now().Add(settle)
	for _, pod := range pods {
		for time.Now().Before(deadline) {
			now := &corev1.Pod{}
			err := kube.Get(ctx, client.ObjectKeyFromObject(pod), now)
			if (err != nil && client.IgnoreNotFound(err) == nil) || (err == nil && now.UID != pod.UID) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	sort.Strings(out)
	return out
}
