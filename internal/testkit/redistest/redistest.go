// Package redistest starts a throwaway redis-server for a test. Each call to Start runs its own
// server on a free loopback port, without persistence, and stops it when the test ends.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing redis-server from a skip into a
// failure: set it to 1 where the Redis tests must run (in CI, say).
const RequireEnv = "REMEDY_REQUIRE_REDIS"

const (
	// readyTimeout bounds the wait for one server to answer PING.
	readyTimeout = 10 * time.Second
	// attempts is how many ports Start tries: a port found free can be taken by another
	// process before redis-server binds it.
	attempts = 5
	// stopTimeout bounds the wait for a killed server to be reaped.
	stopTimeout = 10 * time.Second
)

// Start starts a redis-server on a free port of 127.0.0.1, in a directory of tb.TempDir(), with
// persistence off, waits until it answers PING and returns its address, "127.0.0.1:port". The
// server is killed in tb.Cleanup, also when the test fails or stops midway.
//
// When redis-server is not on PATH, Start skips the test, saying what to install; with
// REMEDY_REQUIRE_REDIS=1 in the environment it fails the test instead.
func Start(tb testing.TB) string {
	tb.Helper()
	bin := lookPath(tb, "redis-server", "redis-server")
	dir := tb.TempDir()
	var failures []string
	for attempt := 1; attempt <= attempts; attempt++ {
		srv, err := start(tb, bin, filepath.Join(dir, strconv.Itoa(attempt)))
		if err == nil {
			return srv.addr
		}
		failures = append(failures, fmt.Sprintf("attempt %d: %v", attempt, err))
		if !errors.Is(err, errExited) {
			break // the server is running but did not answer: another port will not help
		}
	}
	tb.Fatalf("redistest: could not start %s:\n%s", bin, strings.Join(failures, "\n"))
	return ""
}

// lookPath returns the path of the program name, which the Debian package pkg installs. When
// it is not on PATH, lookPath skips the test, saying what to install, or with
// REMEDY_REQUIRE_REDIS=1 fails it.
func lookPath(tb testing.TB, name, pkg string) string {
	tb.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("redistest: %s is required (%s=1) but is not on PATH: install it (Debian/Ubuntu: apt-get install %s; macOS: brew install redis): %v", name, RequireEnv, pkg, err)
		}
		tb.Skipf("redistest: %s is not installed, skipping: install it (Debian/Ubuntu: apt-get install %s; macOS: brew install redis), or set %s=1 to fail instead of skipping", name, pkg, RequireEnv)
	}
	return bin
}

// errExited: the server exited before it answered, as it does when its port was taken.
var errExited = errors.New("redis-server exited")

// process is one running redis-server.
type process struct {
	addr    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	// stop kills the server, if it still runs, and waits until it has exited.
	stop func()
}

// start runs one server in dir, with the extra arguments of redis-server after the common
// ones. The server is stopped in tb.Cleanup when it started, and before start returns when it
// did not answer.
func start(tb testing.TB, bin, dir string, extra ...string) (*process, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logPath := filepath.Join(dir, "redis.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor

	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--logfile", "",
	}
	cmd := exec.Command(bin, append(args, extra...)...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		select {
		case <-exited:
			return
		default:
		}
		_ = cmd.Process.Kill() // nothing to save: persistence is off
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			tb.Errorf("redistest: redis-server (pid %d) on %s did not exit %v after SIGKILL", cmd.Process.Pid, addr, stopTimeout)
		}
	}

	if err := waitReady(addr, exited); err != nil {
		stop()
		return nil, fmt.Errorf("%w\nredis-server log (%s):\n%s", err, logPath, tail(logPath))
	}
	tb.Cleanup(stop)
	return &process{addr: addr, logPath: logPath, cmd: cmd, exited: exited, stop: stop}, nil
}

// waitReady waits until the server on addr answers PING, for at most readyTimeout.
func waitReady(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	var last error
	for {
		select {
		case <-exited:
			return fmt.Errorf("%w before it answered PING on %s", errExited, addr)
		default:
		}
		if last = ping(addr); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server did not answer PING on %s within %v: %v", addr, readyTimeout, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends PING to addr in RESP and expects +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, err
	}
	return port, nil
}

// tail returns the last lines of the file at path, for a failure message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
