package mcpgo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/remedy-go/remedy/internal/testkit/interop"
)

// stdioServerEnv, set in the environment of this test binary, makes it serve the mcp-go app
// (newApp) on its standard input and output instead of running tests: the mcp-go server that
// remedy's client reaches over stdio.
const stdioServerEnv = "REMEDY_MCPGO_STDIO_SERVER"

// tmp holds what the tests build: the remedy binary.
var tmp string

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		s, _ := newApp()
		if err := server.ServeStdio(s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	var err error
	tmp, err = os.MkdirTemp("", "remedy-mcpgo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	remedyBin string
	buildErr  error
)

// remedyBinary builds ./cmd/remedy once for the test binary's run and returns its path.
func remedyBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		bin := filepath.Join(tmp, "remedy")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/remedy")
		cmd.Dir = filepath.Join("..", "..") // the root module, with its own go.sum
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/remedy: %v\n%s", err, out)
			return
		}
		remedyBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return remedyBin
}

// mcpgoVersion is the version of mcp-go the tests run, as go.mod requires it.
func mcpgoVersion(t *testing.T) string {
	t.Helper()
	v, err := interop.GoModVersion("go.mod", "github.com/mark3labs/mcp-go")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// row declares the interoperability table's row of t.
func row(t *testing.T, role, transport string, tested ...string) *interop.Counter {
	t.Helper()
	return interop.Record(t, interop.Row{Peer: "mcp-go", Package: "github.com/mark3labs/mcp-go",
		Version: mcpgoVersion(t), Role: role, Transport: transport, Tested: tested})
}
