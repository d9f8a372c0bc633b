package settings

// Expects says in words what the setting at key accepts, exactly as the
// validation messages say it ("an integer from 0 to 100", `one of
// "restart", "beforeOutput"`), so a form's hints and its errors agree. It
// returns "" for a key that is not a setting. Any name stands for a map's
// keys: providers.x.timeoutMs describes every provider's.
func Expects(key string) string {
	path, err := ParsePath(key)
	if err != nil || len(path) == 0 {
		return ""
	}
	n := schemaAt(path)
	if n == nil {
		return ""
	}
	return n.resolve().want()
}
