package main

// Pod questions answered by upstream's own functions: API defaulting and priority admission,
// QoS, resource requests, the kubelet's oom_score_adj and memory-pressure ranking, and the
// grace period the API server sets on DELETE.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	_ "unsafe" // go:linkname

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	v1resource "k8s.io/kubernetes/pkg/api/v1/resource"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/kubelet/eviction"
	kubeletqos "k8s.io/kubernetes/pkg/kubelet/qos"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
)

// rankMemoryPressure is the kubelet eviction manager's ordering under memory pressure
// (pkg/kubelet/eviction, unexported): exceeds-request first, then priority, then usage above request.
//
//go:linkname rankMemoryPressure k8s.io/kubernetes/pkg/kubelet/eviction.rankMemoryPressure
func rankMemoryPressure(pods []*v1.Pod, stats func(*v1.Pod) (statsapi.PodStats, bool))

func decode(raw json.RawMessage, into any) error {
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

// toInternal converts a v1 Pod to the internal type the registry and admission work on.
func toInternal(pod *v1.Pod) (*api.Pod, error) {
	out := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func toV1(pod *api.Pod) (*v1.Pod, error) {
	out := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// createdPod is the pod as the API server stores it on create: the scheme's defaulters, then
// the pod strategy's PrepareForCreate (which also sets status.qosClass).
func createdPod(pod *v1.Pod) (*v1.Pod, error) {
	pod = pod.DeepCopy()
	legacyscheme.Scheme.Default(pod)
	internal, err := toInternal(pod)
	if err != nil {
		return nil, err
	}
	ctx := genericapirequest.WithNamespace(context.Background(), pod.Namespace)
	podregistry.Strategy.PrepareForCreate(ctx, internal)
	out, err := toV1(internal)
	if err == nil {
		out.APIVersion, out.Kind = "v1", "Pod"
	}
	return out, err
}

func defaultPod(raw json.RawMessage) (any, error) {
	var args struct{ Pod v1.Pod }
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	return createdPod(&args.Pod)
}

// admitPriority runs the Priority admission plugin on a pod create, with these PriorityClasses.
func admitPriority(raw json.RawMessage) (any, error) {
	var args struct {
		Pod     v1.Pod
		Classes []schedulingv1.PriorityClass
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	objects := []runtime.Object{}
	for i := range args.Classes {
		pc := args.Classes[i].DeepCopy()
		legacyscheme.Scheme.Default(pc)
		objects = append(objects, pc)
	}
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	plugin := priority.NewPlugin()
	plugin.SetExternalKubeClientSet(client)
	plugin.SetExternalKubeInformerFactory(factory)
	if err := plugin.ValidateInitialization(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }() // Shutdown waits for the stopped informers
	factory.WaitForCacheSync(ctx.Done())

	pod := args.Pod.DeepCopy()
	legacyscheme.Scheme.Default(pod)
	internal, err := toInternal(pod)
	if err != nil {
		return nil, err
	}
	attrs := admission.NewAttributesRecord(internal, nil, api.Kind("Pod").WithVersion("version"),
		pod.Namespace, pod.Name, api.Resource("pods").WithVersion("version"), "", admission.Create,
		&metav1.CreateOptions{}, false, nil)
	if err := plugin.Admit(ctx, attrs, nil); err != nil {
		return map[string]any{"rejected": err.Error()}, nil
	}
	var policy *string
	if internal.Spec.PreemptionPolicy != nil {
		p := string(*internal.Spec.PreemptionPolicy)
		policy = &p
	}
	return map[string]any{"priority": internal.Spec.Priority, "priorityClassName": internal.Spec.PriorityClassName,
		"preemptionPolicy": policy}, nil
}

func podQOS(raw json.RawMessage) (any, error) {
	var args struct{ Pod v1.Pod }
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	return map[string]any{"get": qos.GetPodQOS(&args.Pod), "compute": qos.ComputePodQOS(&args.Pod)}, nil
}

// amounts renders a ResourceList in kubectl-safety's integer units (millicores for cpu, rounded up).
func amounts(list v1.ResourceList) map[string]int64 {
	out := map[string]int64{}
	for name, q := range list {
		if name == v1.ResourceCPU {
			out[string(name)] = q.MilliValue()
		} else {
			out[string(name)] = q.Value()
		}
	}
	return out
}

// podRequests is component-helpers PodRequests with the given options (the scheduler's NodeInfo
// uses status resources and in-place pod-level resizing, both on in 1.36).
func podRequests(raw json.RawMessage) (any, error) {
	var args struct {
		Pod                   v1.Pod
		UseStatusResources    bool
		InPlacePodLevel       bool // InPlacePodLevelResourcesVerticalScaling (beta, on in 1.36)
		SkipPodLevelResources bool
		ExcludeOverhead       bool
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: args.UseStatusResources,
		InPlacePodLevelResourcesVerticalScalingEnabled: args.InPlacePodLevel,
		SkipPodLevelResources:                          args.SkipPodLevelResources, ExcludeOverhead: args.ExcludeOverhead}
	return map[string]any{
		"requests": amounts(resourcehelper.PodRequests(&args.Pod, opts)),
		"limits":   amounts(resourcehelper.PodLimits(&args.Pod, opts)),
		// What the kubelet's eviction manager compares usage with (pkg/api/v1/resource).
		"kubeletMemoryRequest": func() int64 {
			q := v1resource.GetResourceRequestQuantity(&args.Pod, v1.ResourceMemory)
			return q.Value()
		}(),
	}, nil
}

// oomScoreAdj is the kubelet's GetContainerOOMScoreAdjust for every container and init container.
func oomScoreAdj(raw json.RawMessage) (any, error) {
	var args struct {
		Pod            v1.Pod
		MemoryCapacity int64
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for i := range args.Pod.Spec.InitContainers {
		c := &args.Pod.Spec.InitContainers[i]
		out[c.Name] = kubeletqos.GetContainerOOMScoreAdjust(&args.Pod, c, args.MemoryCapacity)
	}
	for i := range args.Pod.Spec.Containers {
		c := &args.Pod.Spec.Containers[i]
		out[c.Name] = kubeletqos.GetContainerOOMScoreAdjust(&args.Pod, c, args.MemoryCapacity)
	}
	return out, nil
}

// memoryRank sorts pods (given in the caller's order) as the kubelet does under memory
// pressure. usage maps "namespace/name" to working-set bytes; pods without usage have no stats.
func memoryRank(raw json.RawMessage) (any, error) {
	var args struct {
		Pods  []v1.Pod
		Usage map[string]uint64
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	pods := make([]*v1.Pod, len(args.Pods))
	for i := range args.Pods {
		pods[i] = &args.Pods[i]
	}
	stats := func(p *v1.Pod) (statsapi.PodStats, bool) {
		used, ok := args.Usage[p.Namespace+"/"+p.Name]
		if !ok {
			return statsapi.PodStats{}, false
		}
		return statsapi.PodStats{Memory: &statsapi.MemoryStats{WorkingSetBytes: &used}}, true
	}
	rankMemoryPressure(pods, stats)
	order := []string{}
	for _, p := range pods {
		order = append(order, p.Namespace+"/"+p.Name)
	}
	return order, nil
}

// deleteGrace is the API server's DELETE path for a pod: rest.BeforeDelete with the pod strategy.
// now is irrelevant except when shortening an expired grace period (it uses the real clock).
func deleteGrace(raw json.RawMessage) (any, error) {
	var args struct {
		Pod                v1.Pod
		GracePeriodSeconds *int64
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	internal, err := toInternal(&args.Pod)
	if err != nil {
		return nil, err
	}
	options := &metav1.DeleteOptions{GracePeriodSeconds: args.GracePeriodSeconds}
	ctx := genericapirequest.WithNamespace(context.Background(), args.Pod.Namespace)
	graceful, pending, err := rest.BeforeDelete(podregistry.Strategy, ctx, internal, options)
	if err != nil {
		return map[string]any{"error": err.Error()}, nil
	}
	// What happens next (generic registry Store.Delete): graceful -> the object is updated with
	// the new deletionGracePeriodSeconds (0 then deletes at once); pending -> nothing changes;
	// neither -> deleted at once.
	seconds := int64(0)
	switch {
	case graceful && internal.DeletionGracePeriodSeconds != nil:
		seconds = *internal.DeletionGracePeriodSeconds
	case pending && internal.DeletionGracePeriodSeconds != nil:
		seconds = *internal.DeletionGracePeriodSeconds
	}
	return map[string]any{"graceful": graceful, "pending": pending, "seconds": seconds}, nil
}
