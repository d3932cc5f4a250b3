package remedy_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// view is the golden form of an envelope: every normalized field, in a stable order, with the
// wait both as milliseconds and as text.
type view struct {
	Dialect           remedy.Dialect     `json:"dialect"`
	Status            int                `json:"status"`
	Code              string             `json:"code"`
	Type              string             `json:"type,omitempty"`
	Title             string             `json:"title,omitempty"`
	Message           string             `json:"message"`
	Retryable         bool               `json:"retryable"`
	RetrySource       remedy.RetrySource `json:"retry_source"`
	RetryAfterMs      float64            `json:"retry_after_ms,omitempty"`
	RetryAfter        string             `json:"retry_after,omitempty"`
	Severity          remedy.Severity    `json:"severity"`
	Category          remedy.Category    `json:"category"`
	Issues            []issueView        `json:"issues,omitempty"`
	Schema            json.RawMessage    `json:"schema,omitempty"`
	Hint              string             `json:"hint,omitempty"`
	Suggestions       []string           `json:"suggestions,omitempty"`
	NextOperation     string             `json:"next_operation,omitempty"`
	NextOperationArgs json.RawMessage    `json:"next_operation_args,omitempty"`
	ConfirmationToken string             `json:"confirmation_token,omitempty"`
	CurrentStatus     string             `json:"current_status,omitempty"`
	RequiredStatus    string             `json:"required_status,omitempty"`
	TraceID           string             `json:"trace_id,omitempty"`
	RequestID         string             `json:"request_id,omitempty"`
	DocsURL           string             `json:"docs_url,omitempty"`
	RelatedCodes      []string           `json:"related_codes,omitempty"`
	ExampleRequest    json.RawMessage    `json:"example_request,omitempty"`
	Intent            string             `json:"intent,omitempty"`
	DeprecatedType    string             `json:"deprecated_type,omitempty"`
	Replayed          bool               `json:"replayed,omitempty"`
	Errors            []view             `json:"errors,omitempty"`
}

type issueView struct {
	Path           string            `json:"path"`
	Code           string            `json:"code,omitempty"`
	Message        string            `json:"message,omitempty"`
	Expected       json.RawMessage   `json:"expected,omitempty"`
	Received       json.RawMessage   `json:"received,omitempty"`
	AllowedValues  []json.RawMessage `json:"allowed_values,omitempty"`
	SuggestedValue json.RawMessage   `json:"suggested_value,omitempty"`
	Field          string            `json:"field,omitempty"`
}

func toView(e *remedy.Envelope) view {
	v := view{
		Dialect: e.Dialect, Status: e.Status, Code: e.Code, Type: e.Type, Title: e.Title,
		Message: e.Message, Retryable: e.Retryable, RetrySource: e.RetrySource,
		Severity: e.Severity, Category: e.Category, Schema: e.Schema, Hint: e.Hint,
		Suggestions: e.Suggestions, NextOperation: e.NextOperation,
		NextOperationArgs: e.NextOperationArgs, ConfirmationToken: e.ConfirmationToken,
		CurrentStatus: e.CurrentStatus, RequiredStatus: e.RequiredStatus, TraceID: e.TraceID,
		RequestID: e.RequestID, DocsURL: e.DocsURL, RelatedCodes: e.RelatedCodes,
		ExampleRequest: e.ExampleRequest, Intent: e.Intent, DeprecatedType: e.DeprecatedType,
		Replayed: e.Replayed,
	}
	if e.RetryAfter > 0 {
		v.RetryAfterMs = float64(e.RetryAfter) / float64(time.Millisecond)
		v.RetryAfter = e.RetryAfter.String()
	}
	for _, is := range e.Issues {
		v.Issues = append(v.Issues, issueView(is))
	}
	for i := range e.Errors {
		v.Errors = append(v.Errors, toView(&e.Errors[i]))
	}
	return v
}

// TestGolden parses every recorded response of the corpus and compares the normalized envelope
// and its prompt with the golden files; -update rewrites them.
func TestGolden(t *testing.T) {
	for _, s := range loadCorpus(t) {
		t.Run(s.dialect+"/"+s.name, func(t *testing.T) {
			t.Parallel()
			e, ok := remedy.Parse(s.status, s.header, s.body)
			require.True(t, ok, "a failure in the corpus was not read as one")
			require.NotNil(t, e)
			assert.Equal(t, remedy.Dialect(s.dialect), e.Dialect, "recognized as the wrong dialect")

			got, err := json.MarshalIndent(toView(e), "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')
			prompt := []byte(e.Prompt())
			if *update {
				require.NoError(t, os.WriteFile(s.path+".golden.json", got, 0o644))
				require.NoError(t, os.WriteFile(s.path+".prompt.txt", prompt, 0o644))
				return
			}
			want, err := os.ReadFile(s.path + ".golden.json")
			require.NoError(t, err, "no golden file: run go test -run Golden -update")
			assert.Equal(t, string(want), string(got))
			wantPrompt, err := os.ReadFile(s.path + ".prompt.txt")
			require.NoError(t, err, "no golden prompt: run go test -run Golden -update")
			assert.Equal(t, string(wantPrompt), string(prompt))
		})
	}
}
