package main

// The disruption controller's status computation: pkg/controller/disruption's sync (unexported,
// reached by go:linkname) on each PDB, over informers of a fake clientset. Scale subresources
// are served for ReplicaSets, Deployments, StatefulSets and ReplicationControllers that exist;
// discovery lists no scale subresource for DaemonSets, Jobs and CronJobs (as the API server).

import (
	"context"
	"encoding/json"
	"time"
	_ "unsafe" // go:linkname

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fakescale "k8s.io/client-go/scale/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/controller/disruption"
)

//go:linkname pdbSync k8s.io/kubernetes/pkg/controller/disruption.(*DisruptionController).sync
func pdbSync(dc *disruption.DisruptionController, ctx context.Context, key string) error

var scaleKinds = map[string]bool{"replicasets": true, "deployments": true, "statefulsets": true, "replicationcontrollers": true}

func apiResources(gv string, names ...string) *metav1.APIResourceList {
	list := &metav1.APIResourceList{GroupVersion: gv}
	for _, name := range names {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: name, Namespaced: true})
		if scaleKinds[name] {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: name + "/scale",
				Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale"})
		}
	}
	return list
}

func restMapper() meta.RESTMapper {
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, {Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "apps", Version: "v1", Kind: "StatefulSet"}, {Group: "apps", Version: "v1", Kind: "DaemonSet"},
		{Group: "batch", Version: "v1", Kind: "Job"}, {Group: "batch", Version: "v1", Kind: "CronJob"},
		{Group: "", Version: "v1", Kind: "ReplicationController"},
	} {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	return mapper
}

// pdbStatus answers each PDB's status after one sync of the disruption controller.
func pdbStatus(raw json.RawMessage) (any, error) {
	var args struct {
		Pods         []v1.Pod
		PDBs         []policyv1.PodDisruptionBudget
		ReplicaSets  []appsv1.ReplicaSet
		Deployments  []appsv1.Deployment
		StatefulSets []appsv1.StatefulSet
		DaemonSets   []appsv1.DaemonSet
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	objects := []runtime.Object{}
	scales := map[string]*autoscalingv1.Scale{} // "resource/namespace/name"
	addScale := func(resource string, m metav1.ObjectMeta, replicas *int32) {
		n := int32(1)
		if replicas != nil {
			n = *replicas
		}
		scales[resource+"/"+m.Namespace+"/"+m.Name] = &autoscalingv1.Scale{ObjectMeta: m, Spec: autoscalingv1.ScaleSpec{Replicas: n}}
	}
	for i := range args.Pods {
		objects = append(objects, &args.Pods[i])
	}
	for i := range args.PDBs {
		objects = append(objects, &args.PDBs[i])
	}
	for i := range args.ReplicaSets {
		objects = append(objects, &args.ReplicaSets[i])
		addScale("replicasets", args.ReplicaSets[i].ObjectMeta, args.ReplicaSets[i].Spec.Replicas)
	}
	for i := range args.Deployments {
		objects = append(objects, &args.Deployments[i])
		addScale("deployments", args.Deployments[i].ObjectMeta, args.Deployments[i].Spec.Replicas)
	}
	for i := range args.StatefulSets {
		objects = append(objects, &args.StatefulSets[i])
		addScale("statefulsets", args.StatefulSets[i].ObjectMeta, args.StatefulSets[i].Spec.Replicas)
	}
	for i := range args.DaemonSets {
		objects = append(objects, &args.DaemonSets[i])
	}
	client := fake.NewClientset(objects...)
	client.Resources = []*metav1.APIResourceList{
		apiResources("v1", "pods", "replicationcontrollers"),
		apiResources("apps/v1", "replicasets", "deployments", "statefulsets", "daemonsets"),
		apiResources("batch/v1", "jobs", "cronjobs"),
	}
	scaleClient := &fakescale.FakeScaleClient{}
	scaleClient.AddReactor("get", "*", func(action core.Action) (bool, runtime.Object, error) {
		get := action.(core.GetAction)
		key := get.GetResource().Resource + "/" + get.GetNamespace() + "/" + get.GetName()
		if s, ok := scales[key]; ok {
			return true, s.DeepCopy(), nil
		}
		return true, nil, errors.NewNotFound(get.GetResource().GroupResource(), get.GetName())
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	factory := informers.NewSharedInformerFactory(client, 0)
	dc := disruption.NewDisruptionController(ctx,
		factory.Core().V1().Pods(), factory.Policy().V1().PodDisruptionBudgets(),
		factory.Core().V1().ReplicationControllers(), factory.Apps().V1().ReplicaSets(),
		factory.Apps().V1().Deployments(), factory.Apps().V1().StatefulSets(),
		client, restMapper(), scaleClient, client.Discovery())
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	factory.WaitForCacheSync(ctx.Done())

	out := map[string]any{}
	for _, pdb := range args.PDBs {
		key := pdb.Namespace + "/" + pdb.Name
		syncErr := pdbSync(dc, ctx, key)
		got, err := client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).Get(ctx, pdb.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		entry := map[string]any{"status": got.Status}
		if syncErr != nil {
			entry["syncError"] = syncErr.Error()
		}
		out[key] = entry
	}
	return out, nil
}
