// Command releasecheck rehearses a release (make release-check): it
// publishes every published module (release.Published) of the working
// tree at VERSION into a module proxy on disk, then, in a fresh directory
// outside the repository with an empty module cache, installs them as a
// user would (GOPROXY=file:///<proxy>,<the usual proxy>,
// GONOSUMDB=github.com/agentwork/agentwork, GOFLAGS="-mod=mod -trimpath"): it builds
// and runs the README's first program against a fake OpenAI server,
// builds a Temporal and a Restate coordinator and worker that use
// telemetry (testdata/consumers), and runs tests of the Temporal and the
// Restate runner with the consumer's build list, against their real
// servers. It exits non-zero on anything a published release would fail
// on.
//
//	cd tools/release && go run ./cmd/releasecheck [-keep] [-cold] [-tags]
//
// -tags prints the git tags the release needs and exits. -cold also uses
// an empty build cache (slow: it compiles everything). -keep leaves the
// temporary directory for inspection.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentwork/agentwork/tools/release"
)

func main() {
	keep := flag.Bool("keep", false, "keep the temporary directory")
	cold := flag.Bool("cold", false, "use an empty build cache too (GOCACHE)")
	tags := flag.Bool("tags", false, "print the release's git tags and exit")
	flag.Parse()
	if err := run(*keep, *cold, *tags); err != nil {
		fmt.Fprintln(os.Stderr, "release-check: FAILED:", err)
		os.Exit(1)
	}
}

func run(keep, cold, tagsOnly bool) error {
	start := time.Now()
	root, err := release.Root(".")
	if err != nil {
		return err
	}
	version, err := release.Version(root)
	if err != nil {
		return err
	}
	mods, err := release.Modules(root)
	if err != nil {
		return err
	}
	if tagsOnly {
		for _, m := range mods {
			fmt.Printf("%-28s %s\n", m.Tag(version), m.Path)
		}
		return nil
	}
	tmp, err := os.MkdirTemp("", "agentwork-release-")
	if err != nil {
		return err
	}
	rc := &rehearsal{root: root, version: version, mods: mods, tmp: tmp, cold: cold}
	defer func() {
		if keep {
			fmt.Println("release-check: kept", tmp)
			return
		}
		rc.cleanup()
	}()

	proxy := filepath.Join(tmp, "proxy")
	zips, err := buildProxy(root, version, proxy, mods)
	if err != nil {
		return err
	}
	for _, z := range zips {
		fmt.Printf("release-check: zipped %s@%s: %d files, %d KiB, LICENSE included, no nested module\n", z.mod.Path, version, z.files, z.bytes>>10)
	}
	rc.proxy = proxy
	if err := rc.env(); err != nil {
		return err
	}
	for _, c := range consumers(root) {
		t := time.Now()
		if err := rc.consume(c); err != nil {
			return fmt.Errorf("consumer %s: %w", c.name, err)
		}
		fmt.Printf("release-check: consumer %s: ok (%s)\n", c.name, time.Since(t).Round(time.Second))
	}
	fmt.Printf("release-check: ok: %s at %s installs, builds and runs outside the repository (%s)\n",
		strings.Join(paths(mods), ", "), version, time.Since(start).Round(time.Second))
	return nil
}

func paths(mods []release.Module) []string {
	out := make([]string, len(mods))
	for i, m := range mods {
		out[i] = m.Path
	}
	return out
}
