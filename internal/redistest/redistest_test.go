package redistest

import (
	"fmt"
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
		if err := ping(addr); err != nil {
			t.Fatalf("PING %s: %v", addr, err)
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
		if err := ping(addr); err != nil {
			t.Errorf("PING %s: %v", addr, err)
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

// startWith runs Start with a fakeTB in a goroutine of its own, as Goexit requires.
func startWith(t *testing.T) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f)
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
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(conn, "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(param), param)
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	// *2\r\n$len\r\nparam\r\n$len\r\nvalue\r\n
	parts := strings.Split(string(buf[:n]), "\r\n")
	if len(parts) < 5 || parts[0] != "*2" {
		t.Fatalf("CONFIG GET %s answered %q", param, buf[:n])
	}
	return parts[4]
}
