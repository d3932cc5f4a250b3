module github.com/remedy-go/remedy/interop/frameworks

go 1.25.5

replace github.com/remedy-go/remedy => ../..

require github.com/remedy-go/remedy v0.0.0-00010101000000-000000000000

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
