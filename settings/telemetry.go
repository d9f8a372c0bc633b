package settings

// Telemetry is the telemetry group (docs/telemetry.md). The zero Telemetry
// is off, which is also its default.
type Telemetry struct {
	Enabled bool `json:"enabled" jsonschema:"default=false" jsonschema_description:"true: export a span per prompt, turn, model call, retry wait, compaction and tool call, and the GenAI and retry metrics, over OTLP. Also on when an OTEL_EXPORTER_OTLP_*ENDPOINT variable is set or OTEL_TRACES_EXPORTER/OTEL_METRICS_EXPORTER is otlp; OTEL_SDK_DISABLED=true turns it off."`
	// Endpoint is a base URL without credentials: headers (a token) go in
	// OTEL_EXPORTER_OTLP_HEADERS, never in a settings file. It has no
	// schema pattern, as fleet.redis has none: the validator quotes a
	// value that fails one, and this one may hold a token by mistake;
	// package telemetry refuses a bad one without quoting it.
	Endpoint string `json:"endpoint,omitempty" jsonschema_description:"Base URL of the OTLP collector, e.g. http://localhost:4318 (HTTP) or http://localhost:4317 (gRPC); no credentials (put headers in OTEL_EXPORTER_OTLP_HEADERS). OTEL_EXPORTER_OTLP_ENDPOINT wins. Empty: the OTLP default."`
	Protocol string `json:"protocol,omitempty" jsonschema:"enum=http/protobuf,enum=grpc" jsonschema_description:"OTLP transport: http/protobuf (the default) or grpc. OTEL_EXPORTER_OTLP_PROTOCOL wins."`
	// CaptureContent puts message text into spans; off, spans carry
	// names, sizes, classes and times only.
	CaptureContent bool `json:"captureContent" jsonschema:"default=false" jsonschema_description:"true: spans also carry the answers' text and tool arguments. Off by default: prompts and answers never leave the machine; keys never do either way."`
}
