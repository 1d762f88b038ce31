module github.com/phasegate/phasegate

go 1.24.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/text v0.14.0
)
