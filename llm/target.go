package llm

// Target is what a model call goes to: a client and the model it serves.
// A credential rotation hands out Targets and takes them back when a call
// fails (the session's Switcher), so both sides name it without importing
// each other.
type Target struct {
	Provider Provider
	Model    Model
	// Name says what was chosen, for auto_retry_start's switchedTo: a
	// credential id or "provider/model". Never a key.
	Name string
	// Ref identifies the credential behind Provider to whoever handed the
	// Target out; everyone else passes it back unchanged. "" means unknown
	// (a client nobody handed out), whose credential is never marked.
	Ref string
}
