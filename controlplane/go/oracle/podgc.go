package main

// One pass of the pod garbage collector (pkg/controller/podgc, its unexported gc: terminated
// pods over the threshold, terminating pods on NotReady out-of-service nodes, orphaned and
// unscheduled terminating pods) over these nodes and pods; the answer is what it force-deletes.

import (
	"context"
	"encoding/json"
	"sort"
	"time"
	_ "unsafe" // go:linkname

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/controller/podgc"
)

//go:linkname podGCPass k8s.io/kubernetes/pkg/controller/podgc.(*PodGCController).gc
func podGCPass(gcc *podgc.PodGCController, ctx context.Context)

func podGC(raw json.RawMessage) (any, error) {
	var args struct {
		Nodes                  []v1.Node
		Pods                   []v1.Pod
		TerminatedPodThreshold int // the controller manager's default is 12500
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	objects := appendObjects([]runtime.Object{}, args.Nodes)
	objects = appendObjects(objects, args.Pods)
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer func() { cancel(); factory.Shutdown() }()
	gcc := podgc.NewPodGCInternal(ctx, client, factory.Core().V1().Pods(), factory.Core().V1().Nodes(),
		args.TerminatedPodThreshold, time.Hour, time.Hour)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	client.ClearActions()
	podGCPass(gcc, ctx)
	deleted, failed := []string{}, []string{}
	for _, action := range client.Actions() {
		switch a := action.(type) {
		case clienttesting.DeleteAction:
			if a.GetResource().Resource == "pods" {
				deleted = append(deleted, a.GetNamespace()+"/"+a.GetName())
			}
		case clienttesting.PatchAction:
			if a.GetResource().Resource == "pods" && a.GetSubresource() == "status" {
				failed = append(failed, a.GetNamespace()+"/"+a.GetName())
			}
		}
	}
	sort.Strings(deleted)
	sort.Strings(failed)
	return map[string]any{"forceDeleted": deleted, "markedFailed": failed}, nil
}
