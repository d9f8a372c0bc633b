package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Source is one settings layer.
type Source struct {
	Path string // file to read and write; "" means the layer is absent
	Name string // how messages name it: ~/.rally/settings.json, .rally/settings.json
}

// Sources are the two layers, lowest precedence first.
type Sources struct {
	Global, Project Source
}

// Home returns rally's directory: $RALLY_HOME, else ~/.rally.
func Home(home string, getenv func(string) string) string {
	if dir := getenv("RALLY_HOME"); dir != "" {
		if rest, ok := strings.CutPrefix(dir, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return dir
	}
	return filepath.Join(home, ".rally")
}

// Locate returns the settings files for a user home directory and a working
// directory: $RALLY_HOME/settings.json and <cwd>/.rally/settings.json. When
// both are the same file (rally run in the home directory) it is one layer.
func Locate(home, cwd string, getenv func(string) string) Sources {
	g := filepath.Join(Home(home, getenv), "settings.json")
	src := Sources{Global: Source{Path: g, Name: g}}
	if rel, err := filepath.Rel(home, g); home != "" && err == nil && filepath.IsLocal(rel) {
		src.Global.Name = "~/" + filepath.ToSlash(rel)
	}
	if cwd != "" {
		p := filepath.Join(cwd, ".rally", "settings.json")
		if p != g {
			src.Project = Source{Path: p, Name: ".rally/settings.json"}
		}
	}
	return src
}

// Load reads both layers and returns the effective settings. Missing files
// are fine. Warnings (unknown keys) never stop a load; an invalid file does,
// with an error that matches ErrInvalid and holds one *Error per problem
// (see Errors).
func Load(src Sources) (*Settings, []Warning, error) {
	var files []*File
	var errs []error
	for _, s := range []Source{src.Global, src.Project} {
		if s.Path == "" {
			continue
		}
		f, err := ReadFile(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		// Still check the readable files, so one run shows every problem.
		_, warns, err := Merge(files...)
		return nil, warns, errors.Join(append(errs, err)...)
	}
	return Merge(files...)
}

// Merge checks each file, lays them over the defaults in order (later
// wins) and checks the result.
func Merge(files ...*File) (*Settings, []Warning, error) {
	var warns []Warning
	var errs []error
	for _, f := range files {
		w, err := f.Check()
		warns = append(warns, w...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, warns, errors.Join(errs...)
	}
	s, err := overDefaults(files)
	if err != nil {
		return nil, warns, err
	}
	s.normalize()
	if errs := s.check(files); len(errs) > 0 {
		return nil, warns, errors.Join(errs...)
	}
	return s, warns, nil
}

// overDefaults lays the files' documents over the defaults: a file names
// only what it changes, at any depth. encoding/json decodes a document onto
// a value field by field, leaving what the document does not name, so the
// merged documents are decoded straight onto Default(), not the defaults
// too through a document (a marshal and a parse that were most of a load
// with a settings file). A map's element is the one place that differs:
// encoding/json decodes it afresh, while a file's provider of a built-in's
// name merges over the built-in (the README's "an entry with the same name
// merges over the built-in one"), so those entries get the built-in's
// fields through the document first. TestOverDefaultsAsThroughTheDocument
// and FuzzOverDefaults hold the result to the merge of whole documents,
// TestMergeNoFilesIsTheRoundTrip with no document at all.
func overDefaults(files []*File) (*Settings, error) {
	var doc any
	for _, f := range files {
		if f.doc != nil {
			doc = merge(doc, f.doc) // a copy: the files' documents stay as read
		}
	}
	s := Default()
	if doc == nil {
		return s, nil
	}
	// encoding/json matches a field's name without regard to case, and the
	// schema agrees, so "Providers" is providers too (FuzzOverDefaults found
	// a file's "provIders" losing the built-ins' fields).
	if top, ok := doc.(*object); ok && top != nil {
		for _, key := range top.keys {
			given, ok := top.vals[key].(*object)
			if !ok || given == nil || !strings.EqualFold(key, "providers") {
				continue
			}
			for _, name := range given.keys {
				if builtin, ok := s.Providers[name]; ok {
					given.set(name, merge(toDoc(builtin), given.vals[name]))
				}
			}
		}
	}
	if err := unmarshalDoc(doc, s); err != nil {
		return nil, fmt.Errorf("merge settings: %w", err)
	}
	return s, nil
}

// Check validates the file on its own: the schema, then what the schema
// cannot say. Rules that span files (a defaultProvider defined in the other
// file) are Merge's.
func (f *File) Check() ([]Warning, error) {
	if f.doc == nil {
		return nil, nil
	}
	errs, warns := validate(f.Name, f.doc)
	for _, d := range f.dups {
		warns = append(warns, Warning{File: f.Name, Path: formatPath(d), Msg: "key given more than once; the last one is used"})
	}
	if len(errs) == 0 {
		errs = f.checkGo()
	}
	if len(errs) == 0 {
		return warns, nil
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return warns, errors.Join(out...)
}

// checkGo holds the per-file rules the schema cannot express.
func (f *File) checkGo() []*Error {
	var errs []*Error
	// JSON Schema's "integer" accepts 2.0 and 1e2, which a Go int does not.
	walk(f.doc, nil, func(path []string, v any) {
		num, ok := v.(json.Number)
		if n := schemaAt(path); ok && n != nil && n.Type == "integer" {
			if _, err := strconv.ParseInt(num.String(), 10, 64); err != nil {
				errs = append(errs, &Error{File: f.Name, Path: formatPath(path), Msg: "must be " + n.want() + ", got " + describe(v)})
			}
		}
	})
	if len(errs) == 0 {
		// Whatever else encoding/json refuses; not expected past the checks.
		if err := unmarshalDoc(f.doc, new(Settings)); err != nil {
			errs = append(errs, &Error{File: f.Name, Msg: err.Error()})
		}
	}
	if ps, ok := f.doc.get("providers"); ok {
		ps, _ := ps.(*object)
		for _, name := range ps.keys {
			raw, ok := lookup(ps, []string{name, "baseUrl"})
			u, _ := raw.(string)
			path := formatPath([]string{"providers", name, "baseUrl"})
			switch {
			case !ok:
			case hasUserInfo(u):
				// Not quoted: the mistake is a secret in it.
				errs = append(errs, &Error{File: f.Name, Path: path,
					Msg: "must not hold a user or password (the value is not shown): the key goes in rally auth, or in the variable apiKeyEnv names"})
			case !validURL(u):
				errs = append(errs, &Error{File: f.Name, Path: path, Msg: "must be an http or https URL, got " + describe(raw)})
			}
		}
	}
	if raw, ok := lookup(f.doc, []string{"fleet", "redis"}); ok {
		// The value is not quoted: the mistake is a password in it.
		if u, _ := raw.(string); hasPassword(u) {
			errs = append(errs, &Error{File: f.Name, Path: "fleet.redis",
				Msg: "must not hold the Redis password (the value is not shown): remove it from the URL and name its variable in fleet.passwordEnv"})
		}
	}
	return errs
}

// hasPassword reports a URL with a password in its user info.
func hasPassword(s string) bool { return hasUser(s, true) }

// hasUserInfo reports a URL with a user or password before its host
// (https://user:secret@host). A provider's key never belongs there.
func hasUserInfo(s string) bool { return hasUser(s, false) }

func hasUser(s string, password bool) bool {
	u, err := url.Parse(s)
	if err != nil {
		return strings.Contains(s, "@") // unparsable: refuse what may hide one
	}
	if password {
		_, ok := u.User.Password()
		return ok
	}
	return u.User != nil
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// check holds the rules on the merged result. An error names the
// highest-precedence file that set one of the keys involved.
func (s *Settings) check(files []*File) []error {
	var errs []error
	add := func(path []string, blamed [][]string, msg string) {
		errs = append(errs, &Error{File: blame(files, blamed), Path: formatPath(path), Msg: msg})
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range s.Providers {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		p := s.Providers[name]
		at := []string{"providers", name}
		switch {
		case name == Sim && p.API != APISim:
			add(joinPath(at, "api"), [][]string{at}, fmt.Sprintf("must be %q: the offline provider cannot be repointed, got %q", APISim, p.API))
		case p.API == "":
			add(joinPath(at, "api"), [][]string{at}, "is required for a provider that is not built in: must be "+schemaAt(joinPath(at, "api")).want())
		case p.API != APISim && p.BaseURL == "":
			add(joinPath(at, "baseUrl"), [][]string{at}, "is required for a provider that is not built in")
		}
	}
	if _, ok := s.Providers[s.DefaultProvider]; s.DefaultProvider != "" && !ok {
		add([]string{"defaultProvider"}, [][]string{{"defaultProvider"}},
			fmt.Sprintf("must name a provider (%s), got %q", strings.Join(names, ", "), s.DefaultProvider))
	}
	for i, ref := range s.Retry.FallbackModels {
		prov, _, _ := strings.Cut(ref, "/")
		if _, ok := s.Providers[prov]; !ok {
			path := []string{"retry", "fallbackModels", fmt.Sprint(i)}
			add(path, [][]string{path[:2]}, fmt.Sprintf("names unknown provider %q (known: %s)", prov, strings.Join(names, ", ")))
		}
	}
	if s.Retry.BaseDelayMs > s.Retry.MaxDelayMs {
		add([]string{"retry", "maxDelayMs"}, [][]string{{"retry", "maxDelayMs"}, {"retry", "baseDelayMs"}},
			fmt.Sprintf("must be at least retry.baseDelayMs (%d), got %d", s.Retry.BaseDelayMs, s.Retry.MaxDelayMs))
	}
	return errs
}

// blame returns the name of the last file that sets any of paths, or of the
// last file at all when none does (the defaults cannot be wrong alone).
func blame(files []*File, paths [][]string) string {
	for i := len(files) - 1; i >= 0; i-- {
		for _, p := range paths {
			if _, ok := lookup(files[i].doc, p); ok {
				return files[i].Name
			}
		}
	}
	for i := len(files) - 1; i >= 0; i-- {
		if files[i].doc != nil {
			return files[i].Name
		}
	}
	return "settings"
}
