package telemetry

import (
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// resource is the process's resource attributes, one per key.
type resource struct {
	attrs     []attribute.KeyValue
	schemaURL string
}

// sdkName is telemetry.sdk.name: the spans and metrics come from rally's
// own pipeline (trace.go), not from the OpenTelemetry SDK, and saying
// "opentelemetry" would mislead whoever debugs an export.
const sdkName = "rally"

// newResource is service.name rally and its version, telemetry.sdk.*
// (rally's own), then OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME:
// a later one wins for its key, as the SDK's resource.WithFromEnv does. A
// malformed pair is refused without quoting it.
func newResource(getenv func(string) string, version string) (resource, error) {
	kvs := []attribute.KeyValue{
		semconv.ServiceName("rally"), semconv.ServiceVersion(version),
		semconv.TelemetrySDKName(sdkName), semconv.TelemetrySDKLanguageGo, semconv.TelemetrySDKVersion(version),
	}
	for i, pair := range strings.Split(getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return resource{}, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: pair %d is not key=value", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return resource{}, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: pair %d: the value is not URL-encoded", i+1)
		}
		kvs = append(kvs, attribute.String(k, dv))
	}
	if name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); name != "" {
		kvs = append(kvs, semconv.ServiceName(name))
	}
	// One per key, the last given.
	var out []attribute.KeyValue
	for i, kv := range kvs {
		last := true
		for _, later := range kvs[i+1:] {
			if later.Key == kv.Key {
				last = false
				break
			}
		}
		if last {
			out = append(out, kv)
		}
	}
	return resource{attrs: out, schemaURL: semconv.SchemaURL}, nil
}

// typeName is an error's Go type, for the exception event.
func typeName(err error) string { return fmt.Sprintf("%T", err) }
