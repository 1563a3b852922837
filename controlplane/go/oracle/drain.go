package main

// kubectl drain's pod selection: k8s.io/kubectl/pkg/drain Helper.GetPodsForDeletion over a fake
// clientset holding the node's pods and the DaemonSets they may reference.

import (
	"context"
	"encoding/json"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubectl/pkg/drain"
)

func drainPods(raw json.RawMessage) (any, error) {
	var args struct {
		Node                            string
		Pods                            []v1.Pod
		DaemonSets                      []appsv1.DaemonSet
		Force                           bool
		IgnoreAllDaemonSets             bool
		DeleteEmptyDirData              bool
		SkipWaitForDeleteTimeoutSeconds int
		PodSelector                     string
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	// One GetPodsForDeletion per pod (kubectl's filters judge each pod alone), so that every
	// pod gets its own verdict: delete, skip, or the error or warning message it produced.
	verdicts := []map[string]any{}
	for i := range args.Pods {
		pod := &args.Pods[i]
		if pod.Spec.NodeName != args.Node { // the fake clientset ignores field selectors
			continue
		}
		objects := []runtime.Object{pod.DeepCopy()}
		for j := range args.DaemonSets {
			objects = append(objects, args.DaemonSets[j].DeepCopy())
		}
		helper := &drain.Helper{
			Ctx: context.Background(), Client: fake.NewSimpleClientset(objects...),
			Force: args.Force, IgnoreAllDaemonSets: args.IgnoreAllDaemonSets,
			DeleteEmptyDirData: args.DeleteEmptyDirData, PodSelector: args.PodSelector,
			SkipWaitForDeleteTimeoutSeconds: args.SkipWaitForDeleteTimeoutSeconds,
			Out:                             io.Discard, ErrOut: io.Discard,
		}
		list, errs := helper.GetPodsForDeletion(args.Node)
		v := map[string]any{"namespace": pod.Namespace, "name": pod.Name, "decision": "skip", "message": ""}
		switch {
		case len(errs) > 0:
			v["decision"], v["message"] = "error", errs[0].Error()
		case list != nil && len(list.Pods()) == 1:
			v["decision"], v["message"] = "delete", list.Warnings()
		case list != nil:
			v["message"] = list.Warnings()
		}
		verdicts = append(verdicts, v)
	}
	return verdicts, nil
}
