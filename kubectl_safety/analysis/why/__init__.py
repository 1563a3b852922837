"""``why pod|node``: who disrupted a pod, why a node is cordoned, from the evidence the cluster keeps."""
