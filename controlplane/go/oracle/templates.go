package main

// The pods controllers write from their templates, by the controllers' own code: a
// Deployment's new ReplicaSet template (pod-template-hash from controller.ComputeHash), a
// ReplicaSet's pods (controller.GetPodFromTemplate), a StatefulSet's pods with their identity
// and claims from volumeClaimTemplates (newStatefulSetPod), and the pods one sync of the Job
// controller creates (syncJob over a fake client: how many, and their shape).

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"
	_ "unsafe" // go:linkname

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/job"
	_ "k8s.io/kubernetes/pkg/controller/statefulset"
	jobregistry "k8s.io/kubernetes/pkg/registry/batch/job"
	labelsutil "k8s.io/kubernetes/pkg/util/labels"
)

//go:linkname newStatefulSetPod k8s.io/kubernetes/pkg/controller/statefulset.newStatefulSetPod
func newStatefulSetPod(set *appsv1.StatefulSet, ordinal int) *v1.Pod

//go:linkname getPersistentVolumeClaims k8s.io/kubernetes/pkg/controller/statefulset.getPersistentVolumeClaims
func getPersistentVolumeClaims(set *appsv1.StatefulSet, pod *v1.Pod) map[string]v1.PersistentVolumeClaim

//go:linkname syncJob k8s.io/kubernetes/pkg/controller/job.(*Controller).syncJob
func syncJob(jm *job.Controller, ctx context.Context, key string) error

func controllerPods(raw json.RawMessage) (any, error) {
	var args struct {
		Kind        string
		Deployment  *appsv1.Deployment
		ReplicaSet  *appsv1.ReplicaSet
		StatefulSet *appsv1.StatefulSet
		Job         *batchv1.Job
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	switch args.Kind {
	case "Deployment":
		d := args.Deployment
		legacyschemeDefault(d)
		template := *d.Spec.Template.DeepCopy()
		hash := controller.ComputeHash(&template, d.Status.CollisionCount)
		template.Labels = labelsutil.CloneAndAddLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-" + hash, Namespace: d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}}}
		pod, err := controller.GetPodFromTemplate(&template, rs, metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet")))
		if err != nil {
			return nil, err
		}
		return map[string]any{"podTemplateHash": hash, "pods": []*v1.Pod{pod}}, nil
	case "ReplicaSet":
		rs := args.ReplicaSet
		legacyschemeDefault(rs)
		pod, err := controller.GetPodFromTemplate(&rs.Spec.Template, rs, metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet")))
		if err != nil {
			return nil, err
		}
		return map[string]any{"pods": []*v1.Pod{pod}}, nil
	case "StatefulSet":
		set := args.StatefulSet
		legacyschemeDefault(set)
		pods, claims := []*v1.Pod{}, []v1.PersistentVolumeClaim{}
		for ordinal := 0; ordinal < int(*set.Spec.Replicas); ordinal++ {
			pod := newStatefulSetPod(set, ordinal)
			pods = append(pods, pod)
			byName := getPersistentVolumeClaims(set, pod)
			names := []string{}
			for name := range byName {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				claims = append(claims, byName[name])
			}
		}
		return map[string]any{"pods": pods, "claims": claims}, nil
	case "Job":
		return jobPods(args.Job)
	}
	return nil, fmt.Errorf("unknown kind %q", args.Kind)
}

// legacyschemeDefault applies the API server's defaulters (the object as stored).
func legacyschemeDefault(obj runtime.Object) {
	legacyscheme.Scheme.Default(obj)
}

// jobPods runs one sync of the Job controller on the job (with its status) and returns the pods it created.
func jobPods(j *batchv1.Job) (any, error) {
	legacyschemeDefault(j)
	if j.UID == "" {
		j.UID = "job-uid"
	}
	// The API server's create: the job strategy labels the template and selects by them.
	internal := &batch.Job{}
	if err := legacyscheme.Scheme.Convert(j, internal, nil); err != nil {
		return nil, err
	}
	jobregistry.Strategy.PrepareForCreate(context.Background(), internal)
	status := j.Status
	j = &batchv1.Job{}
	if err := legacyscheme.Scheme.Convert(internal, j, nil); err != nil {
		return nil, err
	}
	j.Status = status
	client := fake.NewClientset(j)
	created := 0
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		pod := action.(clienttesting.CreateAction).GetObject().(*v1.Pod)
		if pod.Name == "" { // the API server's generateName
			created++
			pod.Name = fmt.Sprintf("%s%05d", pod.GenerateName, created)
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer func() { cancel(); factory.Shutdown() }()
	jm, err := job.NewController(ctx, client, factory.Core().V1().Pods(), factory.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	client.ClearActions()
	if err := syncJob(jm, ctx, j.Namespace+"/"+j.Name); err != nil {
		return nil, err
	}
	pods := []*v1.Pod{}
	for _, action := range client.Actions() {
		if a, ok := action.(clienttesting.CreateAction); ok && a.GetResource().Resource == "pods" {
			if pod, ok := a.GetObject().(*v1.Pod); ok {
				pods = append(pods, pod)
			}
		}
	}
	return map[string]any{"pods": pods}, nil
}
