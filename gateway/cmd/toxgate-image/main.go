// Command toxgate-image builds toxgate's container image without a
// container engine (internal/ociimage): from a bin directory of static
// programs and model modules it writes an OCI layout and a tarball that
// `docker load` and `podman load` take. `make image` builds the static
// programs and runs it; see deploy/README.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"toxgate/internal/ociimage"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toxgate-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "bin/image/root", "bin directory of static programs (toxgate, toxgate-<plugin>) and modules/*.wasm")
	modules := fs.String("modules", "modules", "the source tree's modules/ folder (cards and data files; empty: left out)")
	out := fs.String("out", "bin/image", "output folder: toxgate-image.tar (docker/podman load) and oci/ (OCI layout)")
	tag := fs.String("tag", "toxgate:dev", "image name and tag")
	ver := fs.String("version", "dev", "org.opencontainers.image.version")
	rev := fs.String("revision", "", "org.opencontainers.image.revision (the commit)")
	src := fs.String("source", "", "org.opencontainers.image.source (the repository URL)")
	certs := fs.String("ca-certs", ociimage.CACertsPath, "CA bundle to ship")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	created, err := sourceDate()
	if err != nil {
		fmt.Fprintf(stderr, "toxgate-image: %v\n", err)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "toxgate-image: %v\n", err)
		return 1
	}
	tmp, err := os.MkdirTemp(*out, ".layers-")
	if err != nil {
		fmt.Fprintf(stderr, "toxgate-image: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	spec := ociimage.Spec{BinDir: *bin, ModulesDir: *modules, CACerts: *certs, Version: *ver, Revision: *rev, Source: *src, Created: created}
	img, err := ociimage.Build(spec, tmp)
	if err == nil {
		err = ociimage.WriteTarball(img, *tag, filepath.Join(*out, "toxgate-image.tar"))
	}
	if err == nil {
		err = ociimage.WriteLayout(img, *tag, filepath.Join(*out, "oci"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "toxgate-image: %v\n", err)
		return 1
	}
	d, _ := img.Digest()
	fmt.Fprintf(stdout, "%s %s\n  docker load -i %s\n  podman load -i %s\n  OCI layout: %s\n", *tag, d,
		filepath.Join(*out, "toxgate-image.tar"), filepath.Join(*out, "toxgate-image.tar"), filepath.Join(*out, "oci"))
	return 0
}

// sourceDate is the time of SOURCE_DATE_EPOCH (reproducible builds), or
// zero (the epoch) when unset.
func sourceDate() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: not a number of seconds", v)
	}
	return time.Unix(n, 0).UTC(), nil
}
