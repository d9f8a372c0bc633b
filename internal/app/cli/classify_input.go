package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// classifyInputError says what is wrong with an input line of rally
// classify in the terms of its format, never Go's: `"status" must be a
// number, got a string`, not `cannot unmarshal string into Go struct field
// classifyIn.status of type int`.
func classifyInputError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return `want one JSON object per line ({"status": 429, "body": "…"}), got ` + jsonValue(te.Value)
	case errors.As(err, &te):
		field, _, _ := strings.Cut(te.Field, ".")
		if field == "headers" && te.Type.Kind() == reflect.String {
			return fmt.Sprintf(`"headers" must map each name to a string, got %s`, jsonValue(te.Value))
		}
		return fmt.Sprintf("%q must be %s, got %s", field, jsonKind(te.Type.Kind()), jsonValue(te.Value))
	case errors.As(err, &se):
		return fmt.Sprintf("not JSON: %s at byte %d", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	}
	return err.Error()
}

// jsonKind names what a Go kind is in JSON.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Bool:
		return "true or false"
	}
	return "a whole number"
}

// jsonValue puts an article before encoding/json's name of a value
// ("string", "array", "number 4.5").
func jsonValue(v string) string {
	switch {
	case strings.Contains(v, " "):
		return v
	case v == "array" || v == "object":
		return "an " + v
	}
	return "a " + v
}
