module github.com/remedy-go/remedy

go 1.25

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
