package main

// The Eviction subresource (pkg/registry/core/pod/storage.EvictionREST.Create) on one pod, with
// the PDBs of its namespace served by a fake clientset and the pod by a one-object store.

import (
	"context"
	"encoding/json"
	_ "unsafe" // go:linkname

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes/fake"
	policyclient "k8s.io/client-go/kubernetes/typed/policy/v1"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/policy"
	"k8s.io/kubernetes/pkg/registry/core/pod/storage"
)

//go:linkname newEvictionStorage k8s.io/kubernetes/pkg/registry/core/pod/storage.newEvictionStorage
func newEvictionStorage(store rest.StandardStorage, pdbClient policyclient.PodDisruptionBudgetsGetter) *storage.EvictionREST

// podStore serves one pod; Delete records the call. Other StandardStorage methods are not
// reached on the dry-run eviction path (they would panic on the nil embedded interface).
type podStore struct {
	rest.StandardStorage
	pod     *api.Pod
	deleted *metav1.DeleteOptions
}

func (s *podStore) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if s.pod == nil || s.pod.Name != name {
		return nil, errors.NewNotFound(api.Resource("pods"), name)
	}
	return s.pod.DeepCopy(), nil
}

func (s *podStore) Delete(ctx context.Context, name string, _ rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if rv := options.Preconditions; rv != nil && rv.ResourceVersion != nil && *rv.ResourceVersion != s.pod.ResourceVersion {
		return nil, false, errors.NewConflict(api.Resource("pods"), name, nil)
	}
	s.deleted = options
	return s.pod, true, nil
}

// evict answers: evicted (and whether a PDB was charged), or the API error (code, message, causes).
func evict(raw json.RawMessage) (any, error) {
	var args struct {
		Pod  v1.Pod
		PDBs []policyv1.PodDisruptionBudget
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	objects := []runtime.Object{}
	for i := range args.PDBs {
		objects = append(objects, args.PDBs[i].DeepCopy())
	}
	client := fake.NewSimpleClientset(objects...)
	pod := args.Pod.DeepCopy()
	if pod.ResourceVersion == "" {
		pod.ResourceVersion = "1"
	}
	internal, err := toInternal(pod)
	if err != nil {
		return nil, err
	}
	store := &podStore{pod: internal}
	r := newEvictionStorage(store, client.PolicyV1())
	eviction := &policy.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}}
	ctx := genericapirequest.WithNamespace(context.Background(), pod.Namespace)
	obj, err := r.Create(ctx, pod.Name, eviction, nil, &metav1.CreateOptions{})
	if err != nil {
		out := map[string]any{"evicted": false, "code": 0, "message": err.Error()}
		if status, ok := err.(errors.APIStatus); ok {
			out["code"] = status.Status().Code
			causes := []string{}
			if d := status.Status().Details; d != nil {
				for _, c := range d.Causes {
					causes = append(causes, c.Message)
				}
			}
			out["causes"] = causes
		}
		return out, nil
	}
	if status, ok := obj.(*metav1.Status); ok && status.Status != metav1.StatusSuccess {
		return map[string]any{"evicted": false, "code": status.Code, "message": status.Message}, nil
	}
	return map[string]any{"evicted": store.deleted != nil, "code": 200}, nil
}
