package agentwork_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreImportsStandardLibraryOnly fails when work/ or middleware/ depend
// on any module outside the standard library.
func TestCoreImportsStandardLibraryOnly(t *testing.T) {
	for _, pkg := range []string{"./work/...", "./middleware/..."} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "matched no packages") {
				continue
			}
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, line := range strings.Fields(string(out)) {
			if !strings.HasPrefix(line, "github.com/agentwork/agentwork/work") &&
				!strings.HasPrefix(line, "github.com/agentwork/agentwork/middleware") {
				t.Errorf("%s depends on non-standard package %s", pkg, line)
			}
		}
	}
}
