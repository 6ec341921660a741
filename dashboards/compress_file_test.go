package dashboards

import (
	"os"
	"strconv"
	"testing"
)

// TestWriteCompressedRules writes the shipped rules compressed
// compressFactor-fold (compressRules) to $AGENTWORK_COMPRESSED_RULES, and
// the factor to that path plus ".factor", for an integration test outside
// this module (make integration-temporal: the Temporal runner's alerts on
// the same compressed rules as the in-process drivers'). Without the
// variable it checks that the compression succeeds.
func TestWriteCompressedRules(t *testing.T) {
	src, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	out, err := compressRules(src, compressFactor)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) == string(src) {
		t.Fatal("compressing changed nothing")
	}
	path := os.Getenv("AGENTWORK_COMPRESSED_RULES")
	if path == "" {
		return
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".factor", []byte(strconv.Itoa(compressFactor)), 0o644); err != nil {
		t.Fatal(err)
	}
}
