package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/remedy-go/remedy/tools"
)

// InvokableTool is a remedy tool as an eino tool: its calls run through remedy's loop, and a
// failure the loop could not repair comes back as the tool's output — the repair text the model
// reads — with a nil error, because an eino ToolsNode ends the whole run on a tool's error.
// Build the toolset with tools.Options{} (FailureAsError false) for that reason.
type InvokableTool struct {
	Tool *tools.Tool
}

var _ tool.InvokableTool = InvokableTool{}

// Tools wraps every tool of ts, for compose.ToolsNodeConfig.Tools.
func Tools(ts *tools.Toolset) []tool.BaseTool {
	var out []tool.BaseTool
	for _, t := range ts.Tools() {
		out = append(out, InvokableTool{t})
	}
	return out
}

// Info is the tool's definition in eino's shape. The parameters are remedy's JSON Schema as they
// are (eino hands a *jsonschema.Schema to the model as it is), and an object of any members
// when the operation does not describe them: eino reads no parameters as "takes no input".
func (t InvokableTool) Info(context.Context) (*schema.ToolInfo, error) {
	def := t.Tool.Definition()
	params := &jsonschema.Schema{Type: "object"}
	if len(def.Parameters) > 0 {
		if err := json.Unmarshal(def.Parameters, params); err != nil {
			return nil, fmt.Errorf("tool %s: parameters: %w", def.Name, err)
		}
	}
	return &schema.ToolInfo{
		Name:        def.Name,
		Desc:        def.Description,
		ParamsOneOf: schema.NewParamsOneOfByJSONSchema(params),
	}, nil
}

// InvokableRun runs the model's call, its arguments as the JSON text of the tool-call message.
// The error is set only when ctx ends (or, with ToolOptions.FailureAsError, on a failure).
func (t InvokableTool) InvokableRun(ctx context.Context, argumentsInJSON string, _ ...tool.Option) (string, error) {
	return t.Tool.Call(ctx, argumentsInJSON)
}
