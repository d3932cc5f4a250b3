package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemaReadsNoFile: a schema whose reference points out of it, at a file the server can
// read, is refused at registration; the file is not read into the schema.
func TestSchemaReadsNoFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(path, []byte(`{"type":"string","enum":["s3cr3t"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"x": {Ref: "file://" + filepath.ToSlash(path)},
	}}
	if _, err := newValidator(s); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("newValidator = %v, want a refusal of the reference", err)
	}
	if _, err := compileSchema(s); err == nil {
		t.Error("compileSchema read the file")
	}
}
