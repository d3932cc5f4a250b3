package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/termsafe"
)

// forgery is a confirmation message written to make a person approve what they do not see: it
// retitles the window, goes back to the start of the line, erases the lines above while moving
// the cursor up over the real operation and payload, writes a harmless operation and payload
// in their place, then hides its tail behind a C1 control and a right-to-left override.
const forgery = "\x1b]0;remedy: all clear\x07\r\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K" +
	"the server asks to confirm this call:\n  operation: get_balance\n  payload:   {}\n\u009b2K\u202ekcehc ylno-daer"

// transferDoc is the OpenAPI document of the transfer server: one operation, transfer.
const transferDoc = `{"openapi":"3.1.0","info":{"title":"transfers","version":"1"},"paths":{"/v1/transfers":{"post":{
"operationId":"transfer","requestBody":{"required":true,"content":{"application/json":{"schema":{"type":"object",
"properties":{"to":{"type":"string"},"amount":{"type":"integer"},"memo":{"type":"string"}}}}}},
"responses":{"201":{"description":"sent"}}}}}}`

// transferServer asks to confirm every transfer with forgery as its message, and executes one
// only when the confirmation token comes back with the payload it was issued for.
type transferServer struct {
	url    string
	mu     sync.Mutex
	bodies []string // every transfer's body, in order
	ran    int      // transfers executed
}

const transferToken = "tok_7f3a9c"

func startTransfers(t *testing.T) *transferServer {
	t.Helper()
	ts := &transferServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, transferDoc)
	})
	mux.HandleFunc("POST /v1/transfers", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts.mu.Lock()
		ts.bodies = append(ts.bodies, string(body))
		confirmed := r.Header.Get(remedy.HeaderConfirmationToken) == transferToken && ts.bodies[0] == string(body)
		if confirmed {
			ts.ran++
		}
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if confirmed {
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":"tr_1"}`)
			return
		}
		env, _ := json.Marshal(map[string]any{"error": map[string]any{"statusCode": 409, "code": "confirmation_required",
			"message": forgery, "confirmationToken": transferToken}})
		w.WriteHeader(http.StatusConflict)
		w.Write(env)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ts.url = srv.URL
	return ts
}

func (ts *transferServer) seen() (bodies []string, ran int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.bodies...), ts.ran
}

// onTerminal runs remedy with a pseudo-terminal as its stdin, stdout and stderr, as a person's
// shell would, types typed once the terminal shows the prompt, and returns the exit status and
// everything the terminal received, its CR LF line ends (the terminal's own) made LF.
func onTerminal(t *testing.T, typed string, args ...string) (int, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if errors.Is(err, pty.ErrUnsupported) {
		t.Skipf("no pseudo-terminal on this system: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if !canPrompt(streams{stdin: tty, stdout: tty, stderr: tty}) {
		t.Fatal("a pseudo-terminal is not taken for a terminal")
	}

	var (
		mu     sync.Mutex
		screen bytes.Buffer
	)
	prompted, read := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		shown := false
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			if !shown && bytes.Contains(screen.Bytes(), []byte("approve? [y/N] ")) {
				shown = true
				close(prompted)
			}
			mu.Unlock()
			if err != nil {
				return // EIO once the terminal's last file is closed
			}
		}
	}()

	// A hang guard only: the call takes milliseconds.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, args, tty, tty, tty) }()
	var code int
	select {
	case <-prompted:
		if _, err := io.WriteString(ptmx, typed); err != nil {
			t.Fatal(err)
		}
		code = <-exit
	case code = <-exit:
		// Not asked: the screen says why.
	case <-ctx.Done():
		t.Fatal("no prompt on the terminal before the guard ran out")
	}
	tty.Close()
	select {
	case <-read:
	case <-ctx.Done():
		t.Fatal("the terminal's output did not end")
	}
	mu.Lock()
	defer mu.Unlock()
	return code, strings.ReplaceAll(screen.String(), "\r\n", "\n")
}

// TestCallPromptOnTerminal: on a real (pseudo-)terminal, a server whose confirmation message
// erases lines, moves the cursor and writes a forged operation cannot change what the person
// reads above approve? [y/N]: the operation and the payload lines are the call's own, the
// payload its exact bytes, and the server's words, labelled, reach the terminal as visible
// escapes, there and in the transcript. Refused, nothing runs; approved, the transfer runs once
// with the payload shown.
func TestCallPromptOnTerminal(t *testing.T) {
	t.Parallel()
	// The payload as the person gives it: spaced, with a right-to-left override of its own.
	const payload = `{"to": "acct_ada", "amount": 4200, "memo": "rent ` + "\u202e" + `"}`
	for _, tc := range []struct {
		typed string
		exit  int
		ran   int
		out   string // on the terminal after the answer
	}{
		{typed: "n\r", exit: exitFailed, ran: 0, out: "=> not executed: transfer needs confirmation\n   would confirm: transfer " + termsafe.String(payload)},
		{typed: "y\r", exit: exitOK, ran: 1, out: "approved at the terminal: transfer " + termsafe.String(payload)},
	} {
		t.Run(strings.TrimSpace(tc.typed), func(t *testing.T) {
			t.Parallel()
			ts := startTransfers(t)
			code, screen := onTerminal(t, tc.typed, "call", ts.url, "transfer", payload)
			shown := escapedLines(screen) // what a failure prints: not the raw screen, which would act on the test's terminal
			if code != tc.exit {
				t.Errorf("exit %d, want %d; the terminal showed:\n%s", code, tc.exit, shown)
			}
			if i := strings.IndexAny(screen, "\x1b\x07\r\u009b\u202e"); i >= 0 {
				t.Errorf("a raw control reached the terminal at byte %d (%q):\n%s", i, screen[i:min(i+12, len(screen))], shown)
			}
			lines := strings.Split(screen, "\n")
			at := -1
			for i, l := range lines {
				if strings.HasPrefix(l, "approve? [y/N] ") {
					if at >= 0 {
						t.Fatalf("asked twice:\n%s", shown)
					}
					at = i
				}
			}
			if at < 4 {
				t.Fatalf("no prompt after the call's lines:\n%s", shown)
			}
			want := []string{
				"the server asks to confirm this call:",
				"  operation: transfer",
				"  payload:   " + termsafe.String(payload),
				"  the server's message (its words, not what runs): " + termsafe.String(forgery),
			}
			if got := lines[at-4 : at]; strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("above the prompt:\n%s\nwant:\n%s", escapedLines(strings.Join(got, "\n")), strings.Join(want, "\n"))
			}
			for _, l := range lines {
				if strings.HasPrefix(strings.TrimSpace(l), "operation: get_balance") {
					t.Errorf("the server forged a line: %s", termsafe.String(l))
				}
			}
			if !strings.Contains(screen, "409 confirmation_required: "+termsafe.String(forgery)) {
				t.Errorf("the transcript lacks the server's message, escaped:\n%s", shown)
			}
			if !strings.Contains(screen, tc.out) {
				t.Errorf("the terminal lacks %q:\n%s", tc.out, shown)
			}
			bodies, ran := ts.seen()
			if ran != tc.ran {
				t.Errorf("the transfer ran %d times, want %d", ran, tc.ran)
			}
			if want := 1 + tc.ran; len(bodies) != want {
				t.Fatalf("%d requests, want %d", len(bodies), want)
			}
			for i, b := range bodies {
				if b != payload {
					t.Errorf("request %d sent %q, want the payload shown, byte for byte: %q", i+1, b, payload)
				}
			}
		})
	}
}

// escapedLines is s with each line escaped (termsafe), its line breaks kept.
func escapedLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = termsafe.String(l)
	}
	return strings.Join(lines, "\n")
}
