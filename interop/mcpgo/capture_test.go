package mcpgo

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/remedy-go/remedy/internal/testkit/corpus"
)

var capture = flag.Bool("capture", false, "rewrite the mcp-go answers recorded in ../../testdata/envelopes")

// envelopesDir is the root module's envelope corpus: one directory per dialect.
var envelopesDir = filepath.Join("..", "..", "testdata", "envelopes")

// captureCases are the failing calls whose answers the corpus records: tool errors (dialect
// mcp) and JSON-RPC errors (dialect jsonrpc), each from a tool of the app (newApp).
var captureCases = []struct {
	dialect, name, tool, args string
}{
	{"mcp", "mcp-go-input-schema-validation", "create_invoice",
		`{"customer_id":"CUS-9","currency":"EUR","amount":0,"memo":"please leave it at the door"}`},
	{"mcp", "mcp-go-input-schema-validation-missing-type-unknown", "create_invoice",
		`{"currency":"eur","amount":"1200","note":"rush"}`},
	{"mcp", "mcp-go-typed-handler-bind-arguments", "legacy_charge",
		`{"customer_id":"cus_ada","amount":"1200","currency":"usd"}`},
	{"mcp", "mcp-go-required-argument", "send_invoice", `{"id":"in_1"}`},
	{"mcp", "mcp-go-tool-result-error", "lookup_customer", `{"id":"cus_nobody"}`},
	{"jsonrpc", "mcp-go-handler-error-32603", "close_books", `{}`},
	{"jsonrpc", "mcp-go-unknown-tool-32602", "void_invoice", `{"id":"in_1"}`},
}

// TestMCPGoCapture sends each failing call to the mcp-go app, served by mcp-go's streamable
// HTTP handler (stateless, protocol 2025-11-25), and checks that the corpus records the
// answer byte for byte: its status, its headers and its body. With -capture it rewrites them
// instead (then regenerate the root module's golden files: go test -run Golden -update).
//
// One liberty: mcp-go lists the violations of a schema validation in the order of a Go map,
// which changes from run to run, so two answers that differ only in that order are the same
// answer, and -capture leaves such a recording as it is.
func TestMCPGoCapture(t *testing.T) {
	t.Parallel()
	s, _ := newApp()
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	for _, c := range captureCases {
		t.Run(c.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, c.tool, c.args)
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if !bytes.Contains(rec.Body.Bytes(), []byte(`"isError":true`)) && !bytes.Contains(rec.Body.Bytes(), []byte(`"error":{`)) {
				t.Fatalf("mcp-go did not refuse the call: %d %s", rec.Code, rec.Body)
			}
			got := corpus.FormatHTTP(rec.Code, rec.Header(), rec.Body.Bytes())
			path := filepath.Join(envelopesDir, c.dialect, c.name+".http")
			want, err := os.ReadFile(path)
			if *capture {
				if err == nil && sameAnswer(got, want) {
					return
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v (run go test -run MCPGoCapture -capture)", err)
			}
			if !sameAnswer(got, want) {
				t.Errorf("mcp-go's answer changed; recorded:\n%s\nnow:\n%s", want, got)
			}
		})
	}
}

// validationMark starts the text of mcp-go's schema validation failure.
var validationMark = []byte("input schema validation failed: ")

// sameAnswer reports whether two recordings are the same answer: byte for byte, but for the
// order of a schema validation failure's violations.
func sameAnswer(a, b []byte) bool {
	return bytes.Equal(a, b) || bytes.Equal(sortedViolations(a), sortedViolations(b))
}

// sortedViolations is a recording with the violations of its schema validation failure, in
// the JSON string that holds them, sorted.
func sortedViolations(rec []byte) []byte {
	i := bytes.Index(rec, validationMark)
	if i < 0 {
		return rec
	}
	start := i + len(validationMark)
	end := start
	for end < len(rec) && rec[end] != '"' {
		if rec[end] == '\\' {
			end++
		}
		end++
	}
	if end > len(rec) {
		return rec
	}
	var parts []string
	text := string(rec[start:end])
	for text != "" {
		next := -1
		for j := 0; ; {
			k := strings.Index(text[j:], "; ")
			if k < 0 {
				break
			}
			if rest := text[j+k+2:]; strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, `\u003croot\u003e: `) || strings.HasPrefix(rest, "<root>: ") {
				next = j + k
				break
			}
			j += k + 2
		}
		if next < 0 {
			parts = append(parts, text)
			break
		}
		parts = append(parts, text[:next])
		text = text[next+2:]
	}
	slices.Sort(parts)
	out := slices.Clone(rec[:start])
	out = append(out, strings.Join(parts, "; ")...)
	return append(out, rec[end:]...)
}
