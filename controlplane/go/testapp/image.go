package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"
)

// image writes a docker-archive tarball (manifest.json, an image config and one layer holding this
// executable as /testapp and an empty /log) that `ctr images import` loads.
func image(args []string) error {
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	name := fs.String("name", "", "image reference, e.g. kubectl-safety.test/testapp:v1")
	out := fs.String("out", "", "tarball to write")
	fs.Parse(args)
	entrypoint := fs.Args()
	if *name == "" || *out == "" || len(entrypoint) == 0 {
		return fmt.Errorf("image needs --name, --out and an entrypoint after --")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	binary, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	epoch := time.Unix(0, 0)
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	for _, dir := range []string{"log/", "tmp/"} {
		header := &tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o1777, ModTime: epoch}
		if err := lw.WriteHeader(header); err != nil {
			return err
		}
	}
	if err := lw.WriteHeader(&tar.Header{Name: "testapp", Mode: 0o755, Size: int64(len(binary)), ModTime: epoch}); err != nil {
		return err
	}
	if _, err := lw.Write(binary); err != nil {
		return err
	}
	if err := lw.Close(); err != nil {
		return err
	}
	layerSum := sha256.Sum256(layer.Bytes())
	layerID := hex.EncodeToString(layerSum[:])
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.UTC().Format(time.RFC3339),
		"config":       map[string]any{"Entrypoint": entrypoint, "WorkingDir": "/"},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerID}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{
		{"Config": configName, "RepoTags": []string{*name}, "Layers": []string{layerID + "/layer.tar"}},
	})
	if err != nil {
		return err
	}
	f, err := os.Create(*out + ".tmp")
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	files := []struct {
		name string
		data []byte
	}{{layerID + "/layer.tar", layer.Bytes()}, {configName, config}, {"manifest.json", manifest}}
	dir := &tar.Header{Name: layerID + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}
	if err := tw.WriteHeader(dir); err != nil {
		return err
	}
	for _, file := range files {
		header := &tar.Header{Name: file.name, Mode: 0o644, Size: int64(len(file.data)), ModTime: epoch}
		if err := tw.WriteHeader(header); err != nil {
			return err
		}
		if _, err := tw.Write(file.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(*out+".tmp", *out)
}
