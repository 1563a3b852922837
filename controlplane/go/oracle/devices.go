package main

// The objects the volume plugins and DynamicResources read, and the managers the scheduler
// builds for them (scheduler.New): the CSINode manager and the DRA manager over an assume cache
// of ResourceClaims and a ResourceSlice tracker.

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// storageAndDevices: the filter question's optional objects.
type storageAndDevices struct {
	PersistentVolumeClaims []v1.PersistentVolumeClaim
	PersistentVolumes      []v1.PersistentVolume
	StorageClasses         []storagev1.StorageClass
	CSINodes               []storagev1.CSINode
	VolumeAttachments      []storagev1.VolumeAttachment
	ResourceClaims         []resourceapi.ResourceClaim
	ResourceSlices         []resourceapi.ResourceSlice
	DeviceClasses          []resourceapi.DeviceClass
}

func (s storageAndDevices) objects() []runtime.Object {
	out := appendObjects(nil, s.PersistentVolumeClaims)
	out = appendObjects(out, s.PersistentVolumes)
	out = appendObjects(out, s.StorageClasses)
	out = appendObjects(out, s.CSINodes)
	out = appendObjects(out, s.VolumeAttachments)
	out = appendObjects(out, s.ResourceClaims)
	out = appendObjects(out, s.ResourceSlices)
	return appendObjects(out, s.DeviceClasses)
}

// startDevices builds the shared CSI and DRA managers as scheduler.New does (DRADeviceTaintRules
// is off by default: the tracker is a plain wrapper of the slice informer).
// synced (set once the informers start) waits until the claim cache and the slice tracker hold
// the question's claims and slices: their event handlers run after the informers' own sync.
type devices struct {
	synced func(ctx context.Context, claims, slices int) error
}

func (d *devices) start(ctx context.Context, factory informers.SharedInformerFactory, client *fake.Clientset) ([]frameworkruntime.Option, error) {
	logger := klog.FromContext(ctx)
	claims := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	tracker, err := resourceslicetracker.StartTracker(ctx, resourceslicetracker.Options{
		EnableConsumableCapacity: true,
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	})
	if err != nil {
		return nil, err
	}
	d.synced = func(ctx context.Context, wantClaims, wantSlices int) error {
		return wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			slices, err := tracker.ListPatchedResourceSlices()
			return err == nil && len(claims.List(nil)) == wantClaims && len(slices) == wantSlices, nil
		})
	}
	dra := dynamicresources.NewDRAManager(ctx, claims, tracker, factory)
	csi := nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())
	return []frameworkruntime.Option{frameworkruntime.WithSharedDRAManager(dra), frameworkruntime.WithSharedCSIManager(csi)}, nil
}
