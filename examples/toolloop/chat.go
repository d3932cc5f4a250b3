package main

import (
	"context"
	"encoding/json"
)

// The function-calling JSON of OpenAI's Chat Completions API (and of the many endpoints
// compatible with it), as much of it as a tool loop uses.

// endpoint is a chat completion endpoint: it takes the JSON body of a request to
// /v1/chat/completions and returns the JSON body of the response. The stand-in model is one;
// an HTTP POST to a real server is another.
type endpoint func(ctx context.Context, request []byte) ([]byte, error)

// chatRequest is what the loop sends each turn: the whole conversation so far, and the tools.
type chatRequest struct {
	Model    string          `json:"model"`
	Messages []message       `json:"messages"`
	Tools    json.RawMessage `json:"tools,omitempty"` // remedy's ToolDefinitions.OpenAI(), as is
}

// chatResponse is the endpoint's answer; the model's next message is its first choice.
type chatResponse struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"` // "chat.completion"
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
}

type choice struct {
	Index        int     `json:"index"`
	Message      message `json:"message"`
	FinishReason string  `json:"finish_reason"` // "tool_calls" or "stop"
}

// message is one message of the conversation. Content is left out of an assistant message
// that only calls tools, as the API allows; a tool message always has some, since Dispatch
// never answers with nothing.
type message struct {
	Role       string     `json:"role"` // system, user, assistant or tool
	Content    string     `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`   // assistant: the calls to run
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool: the call it answers
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON object, as text: what Toolset.Dispatch takes
}

// offeredTool is one element of the request's tools, as the model reads it.
type offeredTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}
