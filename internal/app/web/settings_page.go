package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/rally-agent/rally/internal/htmlw"
	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/settings"
)

// changedMsg says why a save was refused when a settings file is no longer
// what the page was built from.
const changedMsg = "the file changed since you loaded it"

// settingsData is what the settings template shows.
type settingsData struct {
	Nav      string
	Target   string // global or project
	Files    []fileTab
	Version  string
	Form     *formGroup
	Errors   []string // problems not tied to one field
	Conflict string   // the file that changed, when a save was refused for it
	Saved    string
	Broken   bool // the edited file is invalid on disk: nothing can be saved
	// ConfirmHooks asks for the code rally web printed (confirm.go).
	ConfirmHooks bool
}

type fileTab struct {
	Key, Name, Path string
	Exists, Current bool
}

// snapshot is the two settings files as read for one request, with the
// bytes they were read from.
type snapshot struct {
	global, project *settings.File
	// version identifies the bytes of both files: a hash of each, joined.
	version string
	errs    []error // files that could not be read or parsed
}

// readSnapshot reads both files. A file that cannot be parsed is left out
// (nil) and its error kept.
func (s *Server) readSnapshot() *snapshot {
	sn := &snapshot{}
	var versions []string
	read := func(src settings.Source) *settings.File {
		if src.Path == "" {
			versions = append(versions, "none")
			return nil
		}
		data, err := os.ReadFile(src.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			versions = append(versions, "absent")
			return &settings.File{Source: src}
		case err != nil:
			versions = append(versions, "unreadable")
			sn.errs = append(sn.errs, fmt.Errorf("read %s: %w", src.Name, err))
			return nil
		}
		sum := sha256.Sum256(data)
		versions = append(versions, hex.EncodeToString(sum[:12]))
		f, err := settings.ParseFile(src, data)
		if err != nil {
			sn.errs = append(sn.errs, err)
			return nil
		}
		return f
	}
	sn.global = read(s.cfg.Settings.Global)
	sn.project = read(s.cfg.Settings.Project)
	sn.version = strings.Join(versions, ".")
	return sn
}

// changedFile names the file whose bytes differ from those of version, a
// snapshot's version sent back by a form; "" if none does.
func (s *Server) changedFile(version string, sn *snapshot) string {
	old, cur := strings.Split(version, "."), strings.Split(sn.version, ".")
	for i, src := range []settings.Source{s.cfg.Settings.Global, s.cfg.Settings.Project} {
		if len(old) != len(cur) || old[i] != cur[i] {
			return src.Name
		}
	}
	return ""
}

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request) {
	sn := s.readSnapshot()
	d, _, err := s.settingsForm(r, sn, true)
	if err != nil {
		http.Error(w, "rally web: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if n := r.FormValue("saved"); n != "" {
		d.Saved = fmt.Sprintf("Saved: %s change(s) to %s.", n, d.targetName())
		if n == "0" {
			d.Saved = "Nothing to save: no value was changed."
		}
	}
	s.renderSettings(w, http.StatusOK, d)
}

// settingsForm builds the page for the file r asks for (_file: global,
// the default, or project), and the layers it shows. With problems, the
// problems of the files as they are on disk are shown too; a save leaves
// them to its own validation, which must not refuse to edit one file for
// the problems of the other.
func (s *Server) settingsForm(r *http.Request, sn *snapshot, problems bool) (*settingsData, *layers, error) {
	src := s.cfg.Settings
	l := &layers{global: orEmpty(sn.global, src.Global), keys: s.cfg.Keys}
	if src.Project.Path != "" {
		l.project = orEmpty(sn.project, src.Project)
	}
	d := &settingsData{Nav: "settings", Target: "global", Version: sn.version}
	l.target, d.Broken = l.global, sn.global == nil
	if r.FormValue("_file") == "project" && l.project != nil {
		d.Target = "project"
		l.target, d.Broken = l.project, sn.project == nil
	}
	for _, t := range []struct {
		key string
		src settings.Source
	}{{"global", src.Global}, {"project", src.Project}} {
		if t.src.Path == "" {
			continue
		}
		_, err := os.Stat(t.src.Path)
		d.Files = append(d.Files, fileTab{Key: t.key, Name: t.src.Name, Path: t.src.Path, Exists: err == nil, Current: t.key == d.Target})
	}
	// The values shown are those of the files that are valid; the
	// problems of the others are shown, next to their field if they have
	// one.
	found := slices.Clone(sn.errs)
	var valid []*settings.File
	for _, f := range []*settings.File{sn.global, sn.project} {
		if f == nil {
			continue
		}
		if _, err := f.Check(); err != nil {
			found = append(found, err)
			l.invalid = l.invalid || f == sn.global && l.target == l.global || f == sn.project && l.target == l.project
			continue
		}
		valid = append(valid, f)
	}
	eff, _, err := settings.Merge(valid...)
	if err != nil {
		// Fine alone but not together (a defaultProvider the other file
		// dropped): show the defaults and say why.
		found = append(found, err)
		eff = settings.Default()
	}
	l.eff = eff
	root, _ := loadSchema()
	form, err := buildForm(root, l)
	if err != nil {
		return nil, nil, err
	}
	d.Form = form
	byName := map[string]*field{}
	for _, f := range form.fields() {
		byName[f.Name] = f
	}
	if problems {
		for _, p := range found {
			d.attach(p, byName)
		}
	}
	return d, l, nil
}

// attach shows the problems in err next to their fields, or at the top of
// the page when no field fits.
func (d *settingsData) attach(err error, byName map[string]*field) {
	errs := settings.Errors(err)
	if len(errs) == 0 {
		d.Errors = append(d.Errors, err.Error())
		return
	}
	for _, e := range errs {
		f := fieldFor(byName, e.Path)
		if f == nil {
			d.Errors = append(d.Errors, e.Error())
			continue
		}
		f.Errors = append(f.Errors, e.Error())
		if strings.HasSuffix(f.Name, "apiKeyEnv") || strings.Contains(e.Msg, notShown) {
			f.Value = "" // it may be a key pasted in the wrong place, or a URL's password
		}
	}
}

func orEmpty(f *settings.File, src settings.Source) *settings.File {
	if f == nil {
		return &settings.File{Source: src}
	}
	return f
}

// saveSettings applies a submitted form to one file. Nothing is written
// unless every value is valid, alone and merged with the other file, and
// neither file changed since the form was loaded.
func (s *Server) saveSettings(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "rally web: "+err.Error(), http.StatusBadRequest)
		return
	}
	sn := s.readSnapshot()
	d, l, err := s.settingsForm(r, sn, false)
	if err != nil {
		http.Error(w, "rally web: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if name := s.changedFile(r.PostFormValue("_version"), sn); name != "" {
		d.Conflict = name
		s.renderSettings(w, http.StatusConflict, d)
		return
	}
	if d.Broken {
		for _, e := range sn.errs {
			d.attach(e, nil)
		}
		d.Errors = append(d.Errors, "fix the file by hand first; nothing was written")
		s.renderSettings(w, http.StatusUnprocessableEntity, d)
		return
	}
	byName := map[string]*field{}
	for _, f := range d.Form.fields() {
		byName[f.Name] = f
	}
	// Only the form's own fields are accepted: nothing else (a key, say)
	// can be slipped in.
	for name := range r.PostForm {
		if !strings.HasPrefix(name, "_") && byName[name] == nil {
			d.Errors = append(d.Errors, fmt.Sprintf("%s: not a setting this page edits; nothing was written", name))
		}
	}
	hooksBefore := hooksJSON(l.target)
	changes := 0
	for _, t := range d.Form.tables() {
		n, err := addEntry(r, t, l.target, byName, s.cfg.Keys)
		if err != nil {
			d.Errors = append(d.Errors, err.Error())
		}
		changes += n
	}
	changes += applyEdits(r, d.Form.fields(), l.target, s.cfg.Keys)
	if !l.validate(d, byName) || !unknownInEdited(l.target, byName) {
		d.Errors = append(d.Errors, "nothing was written: fix the values marked below")
		s.renderSettings(w, http.StatusUnprocessableEntity, d)
		return
	}
	// Asked last, so that a code is spent only on a save that is
	// otherwise good.
	if hooksJSON(l.target) != hooksBefore && !s.hooks.check(r.PostFormValue("_confirm")) {
		d.Errors = append(d.Errors, s.hooks.refused())
		d.ConfirmHooks = s.hooks.term != nil
		s.renderSettings(w, http.StatusForbidden, d)
		return
	}
	if changes > 0 {
		if err := l.target.Save(r.Context()); err != nil {
			// Check passed, so this is the disk: the file changed in the
			// last instant, or cannot be written.
			d.Errors = append(d.Errors, err.Error())
			status := http.StatusInternalServerError
			if name := s.changedFile(sn.version, s.readSnapshot()); name != "" {
				d.Conflict, status = name, http.StatusConflict
			}
			s.renderSettings(w, status, d)
			return
		}
	}
	q := url.Values{"_file": {d.Target}, "saved": {fmt.Sprint(changes)}}
	http.Redirect(w, r, "/settings?"+q.Encode(), http.StatusSeeOther)
}

// applyEdits puts each submitted value that differs from what the form
// showed into target, and returns how many it put. A field left out of the
// submission (a disabled one) is left alone; problems go to the field.
func applyEdits(r *http.Request, fields []*field, target *settings.File, keys []string) int {
	changes := 0
	for _, f := range fields {
		vals, sent := r.PostForm[f.Name]
		if !sent {
			continue
		}
		v := vals[0]
		if looksLikeKey(v, keys...) {
			f.Errors = append(f.Errors, keyRefused)
			f.Value = ""
			continue
		}
		if f.unchanged(v) {
			continue
		}
		if f.ReadOnly {
			f.Errors = append(f.Errors, fmt.Sprintf("set in %s, which wins over this file; edit it there", f.SourceName))
			continue
		}
		raw, err := f.parse(v)
		if err == nil {
			if raw == nil {
				err = target.Delete(f.Name)
			} else {
				err = target.SetJSON(f.Name, raw)
			}
		}
		f.Value = v
		if f.Widget == wSelect {
			f.selectValue(v)
		}
		if err != nil {
			f.Errors = append(f.Errors, fmt.Sprintf("%s: %s: %v", target.Name, f.Name, err))
			continue
		}
		f.edited = true
		changes++
	}
	return changes
}

// unknownInEdited refuses keys the schema does not know inside the
// values this save changed (a hook or a model typed as JSON): rally
// settings only warns of them, for files a newer rally wrote, but a key
// typed here is a typo that would be ignored silently. It reports whether
// there were none.
func unknownInEdited(target *settings.File, byName map[string]*field) bool {
	warns, _ := target.Check()
	ok := true
	for _, w := range warns {
		f := fieldFor(byName, w.Path)
		if f == nil || !f.edited || f.Name == w.Path {
			continue
		}
		f.Errors = append(f.Errors, fmt.Sprintf("%s: %s: %s; nothing was written", target.Name, w.Path, strings.Replace(w.Msg, ", ignored", "", 1)))
		ok = false
	}
	return ok
}

// validate checks the edited file as rally settings set does: together
// with the other file (a defaultProvider defined there), unless that one is
// broken itself, which must not block editing this one. Each problem goes
// next to its field, or to the page when no field fits. It reports whether
// the form is free of problems.
func (l *layers) validate(d *settingsData, byName map[string]*field) bool {
	var files []*settings.File
	for _, f := range []*settings.File{l.global, l.project} {
		if f == nil {
			continue
		}
		if _, err := f.Check(); f == l.target || err == nil {
			files = append(files, f)
		}
	}
	_, _, err := settings.Merge(files...)
	if err != nil {
		d.attach(err, byName)
	}
	return err == nil && len(d.Errors) == 0 &&
		!slices.ContainsFunc(slices.Collect(maps.Values(byName)), func(f *field) bool { return len(f.Errors) > 0 })
}

// addEntry files the blank row of table t, when it was given a name, as a
// new entry of the target file, and registers its cells under their real
// paths so that validation errors land next to them.
func addEntry(r *http.Request, t *formTable, target *settings.File, byName map[string]*field, keys []string) (int, error) {
	name := strings.TrimSpace(r.PostFormValue(t.NewName))
	if t.New == nil || name == "" {
		return 0, nil
	}
	// The name becomes one segment of a dotted path: one that would parse
	// as more, or as another ([0] as the index 0), is refused, not saved
	// under a name the user did not type.
	if segs, err := settings.ParsePath(name); err != nil || len(segs) != 1 || segs[0] != name {
		return 0, fmt.Errorf("%s: %q cannot be a name: use letters, digits, _ and - (no dots or brackets); nothing was written", t.Key, name)
	}
	t.New.Name = name
	for _, row := range t.Rows {
		if row.Name == name {
			return 0, fmt.Errorf("%s.%s exists already: change it in its own row", t.Key, name)
		}
	}
	changes := 0
	for _, c := range t.New.Cells {
		v := r.PostFormValue(c.Name)
		c.Value = v
		if c.Widget == wSelect {
			c.selectValue(v)
		}
		path := t.Key + "." + name + "." + c.Label
		byName[path] = c
		if looksLikeKey(v, keys...) {
			c.Value = ""
			c.Errors = append(c.Errors, keyRefused)
			continue
		}
		raw, err := c.parse(v)
		if err == nil && raw != nil {
			err = target.SetJSON(path, raw)
			changes++
		}
		if err != nil {
			c.Errors = append(c.Errors, fmt.Sprintf("%s: %s: %v", target.Name, path, err))
		}
	}
	if changes == 0 {
		return 0, fmt.Errorf("%s.%s: give at least one of its settings", t.Key, name)
	}
	return changes, nil
}

// notShown is how settings' messages say that they leave out a value
// that holds a secret; the form leaves it out too.
const notShown = "(the value is not shown)"

// keyRefused is said of a value shaped like an API key.
const keyRefused = "looks like an API key: keys are never stored here (use rally auth add); the value is not shown"

// fieldFor finds the input an error at path belongs to: the field of that
// path, else of the nearest enclosing path (retry.fallbackModels for
// retry.fallbackModels[1]).
func fieldFor(byName map[string]*field, path string) *field {
	for p := path; p != ""; {
		if f := byName[p]; f != nil {
			return f
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return nil
}

func normalizeLines(v string) string {
	var out []string
	for line := range strings.Lines(v) {
		if s := strings.TrimSpace(line); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

// looksLikeKey reports a value holding one of keys or shaped like a
// provider API key, by the one rule rally redacts them with.
func looksLikeKey(v string, keys ...string) bool { return redact.Secrets(v, keys...) != v }

// renderSettings renders the settings page with every known key hidden
// in what it shows: values (a key repeated in a baseUrl query or a hook's
// argument), and the messages about them, which may quote one.
func (s *Server) renderSettings(w http.ResponseWriter, status int, d *settingsData) {
	hide := func(v string) string { return redact.Secrets(v, s.cfg.Keys...) }
	for i := range d.Errors {
		d.Errors[i] = hide(d.Errors[i])
	}
	if d.Form != nil {
		fields := d.Form.fields()
		for _, t := range d.Form.tables() {
			if t.New != nil {
				fields = append(fields, t.New.Cells...)
			}
		}
		for _, f := range fields {
			if looksLikeKey(f.Value, s.cfg.Keys...) {
				f.Value = ""
				f.Notes = append(f.Notes, keyRefused)
			}
			for i := range f.Errors {
				f.Errors[i] = hide(f.Errors[i])
			}
			for i := range f.Notes {
				f.Notes[i] = hide(f.Notes[i])
			}
		}
	}
	s.render(w, status, func(hw *htmlw.Writer) { writeSettings(hw, d) })
}

// unchanged reports whether v, as submitted, is the value the form showed.
// Browsers send a textarea's line ends as CRLF.
func (f *field) unchanged(v string) bool {
	switch f.Widget {
	case wLines:
		return normalizeLines(v) == f.Value
	case wJSON:
		var a, b bytes.Buffer
		if json.Compact(&a, []byte(v)) == nil && json.Compact(&b, []byte(f.Value)) == nil {
			return a.String() == b.String()
		}
		return strings.TrimSpace(v) == strings.TrimSpace(f.Value)
	}
	return strings.TrimSpace(v) == f.Value
}

func (d *settingsData) targetName() string {
	for _, t := range d.Files {
		if t.Current {
			return t.Name
		}
	}
	return d.Target
}
