package main

// A pod create as the API server runs it: the scheme's defaulters, the mutating admission
// plugins (LimitRanger, Priority, DefaultTolerationSeconds, RuntimeClass, in the default
// order), the pod strategy's PrepareForCreate, then the validating plugins (LimitRanger,
// Priority, RuntimeClass, ResourceQuota). The plugins read LimitRanges, PriorityClasses,
// RuntimeClasses and ResourceQuotas (with their status.used) from informers over a fake client.

import (
	"context"
	"encoding/json"
	"time"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	resourcequotaapi "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	quotainstall "k8s.io/kubernetes/pkg/quota/v1/install"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
	"k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"
)

type admissionObjects struct {
	LimitRanges     []v1.LimitRange
	PriorityClasses []schedulingv1.PriorityClass
	RuntimeClasses  []nodev1.RuntimeClass
	ResourceQuotas  []v1.ResourceQuota
}

type namedPlugin struct {
	name   string
	plugin admission.Interface
}

// admissionChain builds the plugins over informers holding objects; stop shuts them down.
func admissionChain(ctx context.Context, objs admissionObjects) (chain []namedPlugin, stop func(), err error) {
	objects := []runtime.Object{}
	for i := range objs.LimitRanges { // as stored: max defaults default, which defaults defaultRequest
		lr := objs.LimitRanges[i].DeepCopy()
		legacyscheme.Scheme.Default(lr)
		objects = append(objects, lr)
	}
	for i := range objs.PriorityClasses {
		pc := objs.PriorityClasses[i].DeepCopy()
		legacyscheme.Scheme.Default(pc)
		objects = append(objects, pc)
	}
	objects = appendObjects(objects, objs.RuntimeClasses)
	objects = appendObjects(objects, objs.ResourceQuotas)
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithCancel(ctx)
	stop = func() { cancel(); factory.Shutdown() }

	limits, err := limitranger.NewLimitRanger(&limitranger.DefaultLimitRangerActions{})
	if err != nil {
		stop()
		return nil, nil, err
	}
	limits.SetExternalKubeClientSet(client)
	limits.SetExternalKubeInformerFactory(factory)
	prio := priority.NewPlugin()
	prio.SetExternalKubeClientSet(client)
	prio.SetExternalKubeInformerFactory(factory)
	rc := runtimeclass.NewRuntimeClass()
	rc.SetExternalKubeClientSet(client)
	rc.SetExternalKubeInformerFactory(factory)
	quota, err := resourcequota.NewResourceQuota(&resourcequotaapi.Configuration{}, 1)
	if err != nil {
		stop()
		return nil, nil, err
	}
	quota.SetDrainedNotification(ctx.Done())
	quota.SetExternalKubeClientSet(client)
	quota.SetExternalKubeInformerFactory(factory)
	quotaConfig, err := quotainstall.NewQuotaConfigurationForAdmission(factory, nil)
	if err != nil {
		stop()
		return nil, nil, err
	}
	quota.SetQuotaConfiguration(quotaConfig)
	chain = []namedPlugin{{"LimitRanger", limits}, {"Priority", prio},
		{"DefaultTolerationSeconds", defaulttolerationseconds.NewDefaultTolerationSeconds()},
		{"RuntimeClass", rc}, {"ResourceQuota", quota}}
	for _, p := range chain {
		if f, ok := p.plugin.(initializer.WantsFeatures); ok {
			f.InspectFeatureGates(utilfeature.DefaultFeatureGate)
		}
		if v, ok := p.plugin.(admission.InitializationValidator); ok {
			if err := v.ValidateInitialization(); err != nil {
				stop()
				return nil, nil, err
			}
		}
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return chain, stop, nil
}

// admitCreate runs the create path on pod; rejected names the plugin (or "validation") and why.
func admitCreate(ctx context.Context, chain []namedPlugin, pod *v1.Pod) (*v1.Pod, map[string]any, error) {
	pod = pod.DeepCopy()
	legacyscheme.Scheme.Default(pod)
	internal, err := toInternal(pod)
	if err != nil {
		return nil, nil, err
	}
	attrs := func() admission.Attributes {
		return admission.NewAttributesRecord(internal, nil, api.Kind("Pod").WithVersion("v1"), pod.Namespace,
			pod.Name, api.Resource("pods").WithVersion("v1"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
	}
	for _, p := range chain {
		if m, ok := p.plugin.(admission.MutationInterface); ok && m.Handles(admission.Create) {
			if err := m.Admit(ctx, attrs(), nil); err != nil {
				return nil, map[string]any{"plugin": p.name, "stage": "mutating", "message": err.Error()}, nil
			}
		}
	}
	nsCtx := genericapirequest.WithNamespace(ctx, pod.Namespace)
	podregistry.Strategy.PrepareForCreate(nsCtx, internal)
	if errs := podregistry.Strategy.Validate(nsCtx, internal); len(errs) > 0 {
		return nil, map[string]any{"plugin": "validation", "stage": "validation", "message": errs.ToAggregate().Error()}, nil
	}
	for _, p := range chain {
		if v, ok := p.plugin.(admission.ValidationInterface); ok && v.Handles(admission.Create) {
			if err := v.Validate(ctx, attrs(), nil); err != nil {
				return nil, map[string]any{"plugin": p.name, "stage": "validating", "message": err.Error()}, nil
			}
		}
	}
	out, err := toV1(internal)
	if err == nil {
		out.APIVersion, out.Kind = "v1", "Pod"
	}
	return out, nil, err
}

// admitPods creates the pods in order (a later pod sees the quota usage of the earlier admitted ones).
func admitPods(raw json.RawMessage) (any, error) {
	var args struct {
		admissionObjects
		Pods []v1.Pod
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	chain, stop, err := admissionChain(ctx, args.admissionObjects)
	if err != nil {
		return nil, err
	}
	defer stop()
	out := []any{}
	for i := range args.Pods {
		pod, rejected, err := admitCreate(ctx, chain, &args.Pods[i])
		if err != nil {
			return nil, err
		}
		if rejected != nil {
			out = append(out, map[string]any{"rejected": rejected})
		} else {
			out = append(out, map[string]any{"pod": pod})
		}
	}
	return out, nil
}
