package testserver_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/testserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServer starts a server: it listens on loopback, its namespace has
// the owner search attribute and one partition per task queue; after
// Stop its process is gone and its files removed.
func TestServer(t *testing.T) {
	s, err := testserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !strings.HasPrefix(s.HostPort, "127.0.0.1:") {
		t.Fatalf("address %s is not loopback", s.HostPort)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	attrs, err := s.Client().OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: testserver.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	if typ := attrs.GetCustomAttributes()[temporal.OwnerSearchAttribute]; typ != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
		t.Fatalf("search attribute %s: %v, want Keyword", temporal.OwnerSearchAttribute, typ)
	}
	pid := serverPID(t, s.HostPort)
	s.Stop()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("the server's process %d lives after Stop", pid)
	}
	if c, err := net.Dial("tcp", s.HostPort); err == nil {
		_ = c.Close()
		t.Fatal("the server's port still accepts connections after Stop")
	}
}

// serverPID is the process whose command line has the server's port.
func serverPID(t *testing.T, hostPort string) int {
	t.Helper()
	_, port, _ := strings.Cut(hostPort, ":")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(b), "start-dev\x00") && strings.Contains(string(b), "\x00--port\x00"+port+"\x00") {
			return pid
		}
	}
	t.Fatalf("no process serves %s", hostPort)
	return 0
}

// TestRestart: a server started in a directory keeps a workflow across
// Kill and Restart, on the same address.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := testserver.StartIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := s.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kept", TaskQueue: "nobody"}, "Nothing")
	if err != nil {
		t.Fatal(err)
	}
	addr := s.HostPort
	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.HostPort != addr {
		t.Fatalf("restarted on %s, want %s", s.HostPort, addr)
	}
	d, err := s.Client().DescribeWorkflowExecution(ctx, "kept", run.GetRunID())
	if err != nil {
		t.Fatalf("the workflow started before the restart: %v", err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("the workflow after the restart: %v, want running", st)
	}
	s.Stop()
	if _, err := os.Stat(filepath.Join(dir, "temporal.db")); err != nil {
		t.Fatalf("StartIn's database after Stop: %v", err)
	}
}
