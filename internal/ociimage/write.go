package ociimage

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// WriteTarball writes img tagged tag (e.g. "toxgate:v1.2.0") to path as a
// tarball in the format `docker save` writes, which `docker load` and
// `podman load` take.
func WriteTarball(img v1.Image, tag, path string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("ociimage: tag %q: %w", tag, err)
	}
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		return fmt.Errorf("ociimage: writing %s: %w", path, err)
	}
	return nil
}

// WriteLayout writes img to dir as an OCI image layout (index.json,
// oci-layout, blobs/), its manifest annotated with tag as
// org.opencontainers.image.ref.name, replacing what dir held. Tools that
// read layouts take it: skopeo copy oci:dir docker-daemon:..., podman load
// -i dir, crane push dir.
func WriteLayout(img v1.Image, tag, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("ociimage: layout %s: %w", dir, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		return fmt.Errorf("ociimage: layout %s: %w", dir, err)
	}
	return nil
}
