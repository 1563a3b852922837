// Command oracle answers questions about Kubernetes objects with upstream's own code
// (k8s.io/kubernetes v1.36.3 and its staging modules), for kubectl-safety's differential tests.
//
// Protocol: one JSON object per line on stdin, {"q": "<question>", ...arguments}; one JSON
// object per line on stdout, {"ok": <answer>} or {"error": "<message>"}, in order. The
// questions and their arguments are listed in handlers below and in the Python helper
// (tests/oracle.py).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/klog/v2"
)

type handler func(raw json.RawMessage) (any, error)

var handlers = map[string]handler{
	"ping":           func(json.RawMessage) (any, error) { return "pong", nil },
	"defaultPod":     defaultPod,
	"admitPriority":  admitPriority,
	"qos":            podQOS,
	"podRequests":    podRequests,
	"oomScoreAdj":    oomScoreAdj,
	"memoryRank":     memoryRank,
	"deleteGrace":    deleteGrace,
	"evict":          evict,
	"drainPods":      drainPods,
	"pdbStatus":      pdbStatus,
	"filter":         schedulerFilter,
	"preempt":        preempt,
	"admitPods":      admitPods,
	"score":          schedulerScore,
	"podGC":          podGC,
	"controllerPods": controllerPods,
}

func answer(line []byte) (out map[string]any) {
	defer func() {
		if r := recover(); r != nil {
			out = map[string]any{"error": fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	var head struct {
		Q string `json:"q"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return map[string]any{"error": "bad request: " + err.Error()}
	}
	h, ok := handlers[head.Q]
	if !ok {
		return map[string]any{"error": "unknown question " + head.Q}
	}
	result, err := h(line)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"ok": result}
}

func main() {
	klog.SetOutput(os.Stderr)
	klog.LogToStderr(false)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		if err := enc.Encode(answer(in.Bytes())); err != nil {
			fmt.Fprintln(os.Stderr, "oracle: encode:", err)
			os.Exit(1)
		}
		out.Flush()
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "oracle: read:", err)
		os.Exit(1)
	}
}
