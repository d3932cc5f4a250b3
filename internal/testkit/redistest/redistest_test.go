package redistest

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStartAnswersAndStops(t *testing.T) {
	var addr string
	t.Run("start", func(t *testing.T) {
		addr = Start(t)
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Fatalf("address %q is not on 127.0.0.1", addr)
		}
		if got := send(t, addr, "*1\r\n$4\r\nPING\r\n"); got != "+PONG\r\n" {
			t.Fatalf("PING %s answered %q", addr, got)
		}
		// Persistence is off.
		for param, want := range map[string]string{"save": "", "appendonly": "no"} {
			if got := configGet(t, addr, param); got != want {
				t.Errorf("CONFIG GET %s = %q, want %q", param, got, want)
			}
		}
	})
	if addr == "" {
		return // skipped
	}
	// The subtest's cleanup stopped the server.
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("redis-server still listens on %s after the test that started it ended", addr)
	}
}

func TestStartTwice(t *testing.T) {
	a, b := Start(t), Start(t)
	if a == b {
		t.Fatalf("two servers on one address %s", a)
	}
	for _, addr := range []string{a, b} {
		if got := send(t, addr, "*1\r\n$4\r\nPING\r\n"); got != "+PONG\r\n" {
			t.Errorf("PING %s answered %q", addr, got)
		}
	}
}

// fakeTB records a skip or a failure instead of acting on it.
type fakeTB struct {
	testing.TB
	mu            sync.Mutex
	skipped, fail string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.mu.Lock()
	f.skipped = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fail = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// startWith runs Start with a fakeTB.
func startWith(t *testing.T) *fakeTB {
	return run(t, func(tb *fakeTB) { Start(tb) })
}

// run runs start with a fakeTB in a goroutine of its own, as Goexit requires.
func run(t *testing.T, start func(*fakeTB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		start(f)
	}()
	<-done
	return f
}

func TestStartWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())

	t.Setenv(RequireEnv, "")
	f := startWith(t)
	if f.fail != "" || !strings.Contains(f.skipped, "apt-get install redis-server") {
		t.Errorf("without redis-server: skipped %q, failed %q; want a skip saying what to install", f.skipped, f.fail)
	}

	t.Setenv(RequireEnv, "1")
	f = startWith(t)
	if f.skipped != "" || !strings.Contains(f.fail, "redis-server is required") {
		t.Errorf("without redis-server, %s=1: skipped %q, failed %q; want a failure", RequireEnv, f.skipped, f.fail)
	}
}

// configGet reads one parameter with CONFIG GET, in RESP2.
func configGet(t *testing.T, addr, param string) string {
	t.Helper()
	reply := send(t, addr, fmt.Sprintf("*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(param), param))
	// *2\r\n$len\r\nparam\r\n$len\r\nvalue\r\n
	parts := strings.Split(reply, "\r\n")
	if len(parts) < 5 || parts[0] != "*2" {
		t.Fatalf("CONFIG GET %s answered %q", param, reply)
	}
	return parts[4]
}

// send sends a command in RESP to the server on addr and returns what one read of its answer
// got. Its time limit only guards against a hang: a busy machine may be slow to answer.
func send(t *testing.T, addr, command string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, command); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}
