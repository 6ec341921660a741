package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentwork/agentwork/adapters/langchaingo/providertest"
	"github.com/agentwork/agentwork/tools/release"
)

// rehearsal is one run: the proxy and the consumers' environment.
type rehearsal struct {
	root, version, tmp, proxy string
	mods                      []release.Module
	cold                      bool
	environ                   []string
}

// consumer is a module of a user's: the published modules it gets, its
// source, what it runs once built, and the runner tests it runs with its
// build list.
type consumer struct {
	name  string
	get   []string                                        // module paths, fetched at VERSION (a runner alone: the root must come by its requirement)
	files func() (map[string][]byte, error)               // its source files by name
	run   func(rc *rehearsal, bin string) error           // runs the built program, if set
	tests func(rc *rehearsal) ([]string, []string, error) // go test arguments and extra environment, if set
}

func consumers(root string) []consumer {
	return []consumer{
		{
			name: "readme",
			get:  []string{release.RootPath},
			files: func() (map[string][]byte, error) {
				prog, err := readmeProgram(filepath.Join(root, "README.md"))
				return map[string][]byte{"main.go": prog}, err
			},
			run: runReadme,
		},
		{
			name:  "temporal",
			get:   []string{release.RootPath + "/runners/temporal"}, // the root comes by its requirement
			files: testdata(root, "temporal"),
			tests: temporalTests,
		},
		{
			name:  "restate",
			get:   []string{release.RootPath + "/runners/restate"},
			files: testdata(root, "restate"),
			tests: restateTests,
		},
		{
			name: "eino",
			get:  []string{release.RootPath + "/adapters/eino"}, // the root comes by its requirement
			files: func() (map[string][]byte, error) {
				prog, err := readmeFragment(filepath.Join(root, "README.md"), "<!-- fragment: adapters/eino")
				return map[string][]byte{"main.go": prog}, err
			},
			run: runEino,
		},
	}
}

// readmeFragment is the README's ```go block that follows the line
// starting with marker.
func readmeFragment(readme, marker string) ([]byte, error) {
	b, err := os.ReadFile(readme)
	if err != nil {
		return nil, err
	}
	_, rest, ok := strings.Cut(string(b), "\n"+marker)
	if !ok {
		return nil, fmt.Errorf("README.md has no %q", marker)
	}
	_, rest, ok = strings.Cut(rest, "\n```go\n")
	if !ok {
		return nil, fmt.Errorf("README.md has no ```go block after %q", marker)
	}
	prog, _, ok := strings.Cut(rest, "\n```\n")
	if !ok || !strings.HasPrefix(prog, "package main\n") {
		return nil, fmt.Errorf("README.md's block after %q is not a complete program (package main)", marker)
	}
	return []byte(prog + "\n"), nil
}

// runEino runs the README's Eino program (offline: its scripted model).
func runEino(rc *rehearsal, bin string) error {
	cmd := exec.Command(bin)
	cmd.Dir = filepath.Dir(bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("the README's Eino program: %w\n%s", err, out)
	}
	if string(out) != "2 fetch\n" {
		return fmt.Errorf("the README's Eino program printed %q, want %q", out, "2 fetch\n")
	}
	fmt.Printf("release-check:   eino: ran the README's Eino program: %s", out)
	return nil
}

func testdata(root, name string) func() (map[string][]byte, error) {
	return func() (map[string][]byte, error) {
		dir := filepath.Join(root, "tools", "release", "testdata", "consumers", name)
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		out := map[string][]byte{}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".go") {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					return nil, err
				}
				out[e.Name()] = b
			}
		}
		return out, nil
	}
}

// readmeProgram is the README's first ```go block.
func readmeProgram(readme string) ([]byte, error) {
	b, err := os.ReadFile(readme)
	if err != nil {
		return nil, err
	}
	_, rest, ok := strings.Cut(string(b), "\n```go\n")
	if !ok {
		return nil, errors.New("README.md has no ```go block")
	}
	prog, _, ok := strings.Cut(rest, "\n```\n")
	if !ok || !strings.HasPrefix(prog, "package main\n") {
		return nil, errors.New("README.md's first ```go block is not a complete program (package main)")
	}
	return []byte(prog + "\n"), nil
}

// env is the consumers' environment: an empty module cache, the proxy on
// disk before the usual one, checksums from the checksum database for
// everything but agentwork, and the build cache as it is (content-addressed,
// so it changes no result; -cold empties it too).
func (rc *rehearsal) env() error {
	usual, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		return fmt.Errorf("go env GOPROXY: %w", err)
	}
	drop := map[string]bool{"GOFLAGS": true, "GOPROXY": true, "GONOSUMDB": true, "GONOSUMCHECK": true, "GOPRIVATE": true,
		"GONOPROXY": true, "GOMODCACHE": true, "GOWORK": true, "GOPATH": true, "GOINSECURE": true, "GOSUMDB": true}
	if rc.cold {
		drop["GOCACHE"] = true
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			rc.environ = append(rc.environ, kv)
		}
	}
	rc.environ = append(rc.environ,
		"GOPATH="+filepath.Join(rc.tmp, "gopath"),
		"GOMODCACHE="+filepath.Join(rc.tmp, "modcache"),
		"GOPROXY=file://"+filepath.ToSlash(rc.proxy)+","+strings.TrimSpace(string(usual)),
		"GONOSUMDB="+release.RootPath,
		// -trimpath: the temporary module cache's path is then in no
		// build action's key, so a second rehearsal reuses the first's
		// compiled packages.
		"GOFLAGS=-mod=mod -trimpath",
		"GOWORK=off",
	)
	if rc.cold {
		rc.environ = append(rc.environ, "GOCACHE="+filepath.Join(rc.tmp, "gocache"))
	}
	return nil
}

// goCmd runs the go command in dir with the consumers' environment.
func (rc *rehearsal) goCmd(dir string, extraEnv []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, rc.environ...), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, out.String())
	}
	return out.String(), nil
}

func (rc *rehearsal) consume(c consumer) error {
	dir := filepath.Join(rc.tmp, "consumers", c.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files, err := c.files()
	if err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	if _, err := rc.goCmd(dir, nil, "mod", "init", "example.com/"+c.name); err != nil {
		return err
	}
	get := []string{"get"}
	for _, p := range c.get {
		get = append(get, p+"@"+rc.version)
	}
	steps := [][]string{get, {"mod", "tidy"}, {"vet", "./..."}, {"build", "-o", c.name, "."}}
	for _, args := range steps {
		t := time.Now()
		if _, err := rc.goCmd(dir, nil, args...); err != nil {
			return err
		}
		fmt.Printf("release-check:   %s: go %s (%s)\n", c.name, strings.Join(args, " "), time.Since(t).Round(100*time.Millisecond))
	}
	if err := rc.checkBuildList(dir, c); err != nil {
		return err
	}
	if c.run != nil {
		if err := c.run(rc, filepath.Join(dir, c.name)); err != nil {
			return err
		}
	}
	if c.tests != nil {
		args, env, err := c.tests(rc)
		if err != nil {
			return err
		}
		t := time.Now()
		out, err := rc.goCmd(dir, env, args...)
		if err != nil {
			return err
		}
		fmt.Printf("release-check:   %s: go %s (%s)\n%s", c.name, strings.Join(args, " "), time.Since(t).Round(100*time.Millisecond), indent(out))
	}
	return nil
}

// checkBuildList: every agentwork module in the consumer's build list is
// the published one at VERSION, from the module cache (no replace).
func (rc *rehearsal) checkBuildList(dir string, c consumer) error {
	out, err := rc.goCmd(dir, nil, "list", "-m", "-json", "all")
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var got []string
	for {
		var m struct {
			Path, Version, Dir string
			Replace            *struct{ Path string }
		}
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		if !strings.HasPrefix(m.Path, release.RootPath) || m.Path == "example.com/"+c.name {
			continue
		}
		if m.Version != rc.version || m.Replace != nil || !strings.HasPrefix(m.Dir, filepath.Join(rc.tmp, "modcache")) {
			return fmt.Errorf("build list has %s %s (dir %s), not the published %s from the proxy", m.Path, m.Version, m.Dir, rc.version)
		}
		got = append(got, m.Path+"@"+m.Version)
	}
	want := map[string]bool{release.RootPath + "@" + rc.version: true}
	for _, p := range c.get {
		want[p+"@"+rc.version] = true
	}
	for _, g := range got {
		delete(want, g)
	}
	if len(want) > 0 {
		return fmt.Errorf("build list has %v, and lacks %v", got, want)
	}
	fmt.Printf("release-check:   %s: build list: %s (from the proxy)\n", c.name, strings.Join(got, ", "))
	return nil
}

// runReadme runs the README's program with its openai client pointed at
// a fake OpenAI server playing both agents, and checks its answer.
func runReadme(rc *rehearsal, bin string) error {
	srv, err := providertest.StartOpenAI(readmeScript())
	if err != nil {
		return err
	}
	defer srv.Close()
	cmd := exec.Command(bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=test", "OPENAI_MODEL=gpt-4o-mini")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("the README's program: %w\n%s", err, out)
	}
	if err := srv.Err(); err != nil {
		return fmt.Errorf("the README's program's requests: %w", err)
	}
	const want = "Brief: Go 1.1 introduced per-P run queues with work stealing. <nil>\n"
	if string(out) != want {
		return fmt.Errorf("the README's program printed %q, want %q", out, want)
	}
	fmt.Printf("release-check:   readme: ran the README's program on a fake OpenAI server (%d requests): %s", len(srv.Requests()), out)
	return nil
}

// readmeScript plays the coordinator (the requests that declare the work
// tool: start the researcher in the background, wait for its report,
// answer with it) and the researcher; a copy of the one Example_readme
// (adapters/langchaingo) runs the program on.
func readmeScript() providertest.Script {
	ref := regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})"`)
	coordinator := providertest.Sequence(
		providertest.Calls(providertest.Call("researcher", `{"input":"the Go scheduler's history","run_in_background":true}`)),
		providertest.ScriptFunc(func(req *providertest.Request) providertest.Reply {
			m := ref.FindStringSubmatch(req.Text())
			if m == nil {
				return providertest.Say("no work.ref")
			}
			return providertest.Calls(providertest.Call("work", `{"action":"result","id":"`+m[1]+`","timeout":"10s"}`))
		}),
		providertest.ScriptFunc(func(req *providertest.Request) providertest.Reply {
			calls := req.ToolCalls()
			report, _ := req.ToolResult(calls[len(calls)-1].ID)
			return providertest.Say("Brief: " + report)
		}),
	)
	return providertest.Route(
		providertest.When(providertest.Declares("work"), coordinator),
		providertest.When(func(*providertest.Request) bool { return true }, providertest.Say("Go 1.1 introduced per-P run queues with work stealing.")),
	)
}

// restateTests runs the Restate runner's own tests that need a server but
// no long suite, compiled from the published zip with the consumer's build
// list, on the restate-server the repository's tests use.
func restateTests(rc *rehearsal) ([]string, []string, error) {
	bin, err := restateServer(rc.root)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"test", "-race", "-count=1", "-run", "^(TestInvalidOptionRefused|TestUnknownTarget)$", release.RootPath + "/runners/restate"}
	return args, []string{"AGENTWORK_RESTATE_SERVER=" + bin}, nil
}

// restateServer is AGENTWORK_RESTATE_SERVER, else the repository's cached
// restate-server, installed by the runner's own tests when missing.
func restateServer(root string) (string, error) {
	if b := os.Getenv("AGENTWORK_RESTATE_SERVER"); b != "" {
		return b, nil
	}
	const glob = ".cache/restate/*/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server"
	if m, _ := filepath.Glob(filepath.Join(root, glob)); len(m) > 0 {
		return m[len(m)-1], nil
	}
	cmd := exec.Command("go", "test", "-race", "-count=1", "-run", "^TestUnknownTarget$", ".")
	cmd.Dir = filepath.Join(root, "runners", "restate")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("installing the restate-server (go test in runners/restate): %w\n%s", err, out)
	}
	if m, _ := filepath.Glob(filepath.Join(root, glob)); len(m) > 0 {
		return m[len(m)-1], nil
	}
	return "", errors.New("no restate-server: set AGENTWORK_RESTATE_SERVER")
}

// temporalTests runs Temporal runner tests compiled from the published
// zip with the consumer's build list, against the Temporal CLI's dev
// server (runners/temporal/testserver) the repository's tests use: an
// option refused without a server, and a Work whose worker process is
// SIGKILLed (worker_lost) and one run again on another worker.
func temporalTests(rc *rehearsal) ([]string, []string, error) {
	bin, err := temporalCLI(rc.root)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"test", "-race", "-count=1", "-run", "^(TestInvalidLimitOptionRefused|TestWorkerLost|TestRetryableWorkerLost)$",
		release.RootPath + "/runners/temporal"}
	return args, []string{"AGENTWORK_TEMPORAL_CLI=" + bin}, nil
}

// temporalCLI is the Temporal CLI of the repository's tests
// (testserver.Binary: AGENTWORK_TEMPORAL_CLI, else the build cached in
// .cache/temporal, made when missing), which awtemporal temporal-cli
// prints.
func temporalCLI(root string) (string, error) {
	cmd := exec.Command("go", "run", "./internal/cmd/awtemporal", "temporal-cli")
	cmd.Dir = filepath.Join(root, "runners", "temporal")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("the Temporal CLI (go run ./internal/cmd/awtemporal temporal-cli in runners/temporal): %w\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// cleanup removes the temporary directory; the module cache's files are
// read-only, so go clean -modcache goes first.
func (rc *rehearsal) cleanup() {
	if rc.environ != nil {
		_, _ = rc.goCmd(rc.tmp, nil, "clean", "-modcache")
	}
	_ = os.RemoveAll(rc.tmp)
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("release-check:     " + l + "\n")
	}
	return b.String()
}
