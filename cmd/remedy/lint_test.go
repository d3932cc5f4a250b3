package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/remedy-go/remedy/examples/billing"
)

// lint reads YAML from a file, from stdin and from a URL, and reports on it as on its JSON.
func TestLintYAMLSources(t *testing.T) {
	t.Parallel()
	api, _, err := billing.New()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "openapi.yaml")
	if err := os.WriteFile(file, y, 0o600); err != nil {
		t.Fatal(err)
	}
	remedyCmd(t, "", "lint", file).wantExit(t, exitOK)
	remedyCmd(t, string(y), "lint", "-").wantExit(t, exitOK)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openapi.yaml":
			if r.Header.Get("Authorization") != "Bearer t" || !strings.Contains(r.Header.Get("Accept"), "yaml") {
				http.Error(w, "who?", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/yaml")
			w.Write(y)
		case "/broken.yaml":
			w.Write([]byte("openapi: 3.1.0\npaths:\n  /a: {get: [}\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	r := remedyCmd(t, "", "lint", "--header", "Authorization: Bearer t", srv.URL+"/openapi.yaml")
	r.wantExit(t, exitOK)
	if !strings.Contains(r.stdout, srv.URL+"/openapi.yaml: ") {
		t.Errorf("want the report on the URL:\n%s", r)
	}
	r = remedyCmd(t, "", "lint", srv.URL+"/broken.yaml")
	r.wantExit(t, exitFailed)
	if !strings.Contains(r.stdout, "not valid YAML: line 3") {
		t.Errorf("want where the YAML breaks:\n%s", r)
	}
	r = remedyCmd(t, "", "lint", srv.URL+"/missing.yaml")
	r.wantExit(t, exitCannotRun)
	if !strings.Contains(r.stderr, "404") {
		t.Errorf("want the status:\n%s", r)
	}
}

// A URL without a path is a server's: lint reads its document at /openapi.json, as probe does
// (issue 40).
func TestLintServerURL(t *testing.T) {
	t.Parallel()
	urls, _, _ := startServe(t, "--addr", "127.0.0.1:0")
	for _, u := range []string{urls[0], urls[0] + "/"} {
		r := remedyCmd(t, "", "lint", u)
		r.wantExit(t, exitOK)
		if !strings.Contains(r.stdout, "/openapi.json") {
			t.Errorf("lint %s: the report does not name the document it read:\n%s", u, r)
		}
	}
}
