package web

import "github.com/rally-agent/rally/internal/htmlw"

func writeSettings(w *htmlw.Writer, d *settingsData) {
	writeHead(w, d.Nav)
	w.Raw("\n<h1>Settings</h1>\n<nav class=\"tabs\">")
	for _, f := range d.Files {
		w.Raw("\n<a href=\"/settings?_file=")
		w.URLQuery(f.Key)
		w.Raw(`"`)
		current(w, f.Current)
		w.Raw(` title="`)
		w.Attr(f.Path)
		w.Raw(`">`)
		w.Text(f.Key)
		w.Raw(" <code>")
		w.Text(f.Name)
		w.Raw("</code>")
		if !f.Exists {
			w.Raw(" <small>(not created yet)</small>")
		}
		w.Raw("</a>")
	}
	w.Raw("\n</nav>\n<p class=\"lede\">Values show what rally uses now and where it comes from. " +
		"Saving writes only the values you changed, into\nthe file of this tab; an empty value removes the key from this file, " +
		"so the other file or the default applies.\nAPI keys never go here: use <code>rally auth add</code>.</p>\n")
	if d.Conflict != "" {
		w.Raw(`<div class="banner conflict" id="conflict" role="alert"><b>`)
		w.Text(d.Conflict)
		w.Raw("</b>: ")
		w.Text(changedMsg)
		w.Raw("; nothing was written.\n<a id=\"reload\" href=\"/settings?_file=")
		w.URLQuery(d.Target)
		w.Raw("\">Reload</a> to see it as it is now, then make your change again.</div>")
	}
	w.Raw("\n")
	with(w, d.Saved, `<div class="banner saved" id="saved" role="status">`, "</div>")
	w.Raw("\n")
	if len(d.Errors) > 0 {
		w.Raw(`<div class="banner errors" id="errors" role="alert"><ul>`)
		for _, e := range d.Errors {
			w.Raw("<li>")
			w.Text(e)
			w.Raw("</li>")
		}
		w.Raw("</ul></div>")
	}
	w.Raw("\n<form method=\"post\" action=\"/settings\" novalidate id=\"settings\">\n<input type=\"hidden\" name=\"_file\" value=\"")
	w.Attr(d.Target)
	w.Raw("\">\n<input type=\"hidden\" name=\"_version\" value=\"")
	w.Attr(d.Version)
	w.Raw("\">\n")
	if d.ConfirmHooks {
		w.Raw("<div class=\"banner confirm\" id=\"confirm-hooks\"><label for=\"f-_confirm\">Code printed by <code>rally web</code> in its terminal</label>\n" +
			"<input id=\"f-_confirm\" name=\"_confirm\" autocomplete=\"off\" spellcheck=\"false\"></div>")
	}
	w.Raw("\n")
	if !d.Broken {
		w.Raw(`<div class="actions"><button type="submit" id="save">Save to `)
		w.Text(d.Target)
		w.Raw(" file</button></div>")
	}
	w.Raw("\n")
	if d.Form != nil {
		for _, g := range d.Form.Groups {
			writeGroup(w, g)
		}
	}
	w.Raw("\n")
	if d.Form != nil {
		for _, t := range d.Form.Tables {
			writeTable(w, t)
		}
	}
	w.Raw("\n<div class=\"actions\">")
	if d.Broken {
		w.Raw("<p class=\"error\">This file is invalid: fix it by hand; the console will not overwrite it.</p>\n")
	} else {
		w.Raw(`<button type="submit" id="save-bottom">Save to `)
		w.Text(d.Target)
		w.Raw(" file</button>")
	}
	w.Raw("</div>\n</form>\n" + foot)
}

// legend writes a fieldset's opening: its id, legend and description.
func legend(w *htmlw.Writer, key, title, desc string) {
	w.Raw(`<fieldset class="group" id="g-`)
	w.Attr(key)
	w.Raw("\">\n<legend>")
	w.Text(title)
	w.Raw("</legend>\n")
	with(w, desc, `<p class="desc">`, "</p>")
	w.Raw("\n")
}

func writeGroup(w *htmlw.Writer, g *formGroup) {
	legend(w, g.Key, g.Title, g.Description)
	w.Raw(`<div class="fields">`)
	for _, f := range g.Fields {
		writeField(w, f)
	}
	w.Raw("</div>\n")
	for _, sub := range g.Groups {
		writeGroup(w, sub)
	}
	w.Raw("\n")
	for _, t := range g.Tables {
		writeTable(w, t)
	}
	w.Raw("\n</fieldset>")
}

// cellStart opens a table cell of field f.
func cellStart(w *htmlw.Writer, f *field) {
	w.Raw(`<td class="w-`)
	w.Attr(f.Widget)
	if len(f.Errors) > 0 {
		w.Raw(" invalid")
	}
	w.Raw(`"`)
}

func writeTable(w *htmlw.Writer, t *formTable) {
	legend(w, t.Key, t.Title, t.Description)
	w.Raw("<div class=\"scroll\"><table class=\"map\">\n<thead><tr><th>name</th>")
	for _, c := range t.Columns {
		w.Raw(`<th title="`)
		w.Attr(c.Description)
		w.Raw(`">`)
		w.Text(c.Name)
		with(w, c.Hint, "<small>", "</small>")
		with(w, c.Default, "<small>default <code>", "</code></small>")
		w.Raw("</th>")
	}
	w.Raw("</tr></thead>\n<tbody>")
	for _, r := range t.Rows {
		w.Raw("\n<tr><th scope=\"row\">")
		w.Text(r.Name)
		w.Raw("</th>")
		for _, f := range r.Cells {
			cellStart(w, f)
			w.Raw(` title="`)
			w.Attr(f.Description)
			w.Raw(`">`)
			writeInput(w, f)
			writeCellMeta(w, f)
			writeErrors(w, f)
			w.Raw("</td>")
		}
		w.Raw("</tr>\n")
		if len(r.Extra) > 0 {
			w.Raw(`<tr class="extra"><td></td><td colspan="`)
			w.Int(len(t.Columns))
			w.Raw(`"><details`)
			for _, f := range r.Extra {
				if len(f.Errors) > 0 {
					w.Raw(" open")
				}
			}
			w.Raw("><summary>")
			w.Text(r.Name)
			w.Raw(": more settings</summary>\n")
			for _, f := range r.Extra {
				writeField(w, f)
			}
			w.Raw("</details></td></tr>")
		}
	}
	w.Raw("\n")
	if n := t.New; n != nil {
		w.Raw(`<tr class="new"><th scope="row"><input id="f-`)
		w.Attr(t.NewName)
		w.Raw(`" name="`)
		w.Attr(t.NewName)
		w.Raw(`" value="`)
		w.Attr(n.Name)
		w.Raw(`" placeholder="add: name" autocomplete="off" spellcheck="false" aria-label="name of a new entry"></th>`)
		for _, f := range n.Cells {
			cellStart(w, f)
			w.Raw(">")
			writeInput(w, f)
			writeErrors(w, f)
			w.Raw("</td>")
		}
		w.Raw("</tr>")
	}
	w.Raw("\n</tbody></table></div>\n</fieldset>")
}

func writeField(w *htmlw.Writer, f *field) {
	w.Raw(`<div class="field`)
	if len(f.Errors) > 0 {
		w.Raw(" invalid")
	}
	w.Raw("\">\n<label for=\"f-")
	w.Attr(f.Name)
	w.Raw(`">`)
	w.Text(f.Label)
	w.Raw("</label>\n")
	writeInput(w, f)
	w.Raw("\n")
	if !f.Bare {
		with(w, f.Description, `<p class="desc">`, "</p>")
	}
	w.Raw("\n")
	writeMeta(w, f)
	w.Raw("\n")
	writeErrors(w, f)
	w.Raw("\n</div>")
}

// control writes the attributes every input of f has: id, name, label.
func control(w *htmlw.Writer, tag string, f *field) {
	w.Raw("<" + tag + ` id="f-`)
	w.Attr(f.Name)
	w.Raw(`" name="`)
	w.Attr(f.Name)
	w.Raw(`"`)
}

func ariaLabel(w *htmlw.Writer, f *field) {
	w.Raw(` aria-label="`)
	w.Attr(f.Name)
	w.Raw(`"`)
}

func disabled(w *htmlw.Writer, f *field) {
	if f.ReadOnly {
		w.Raw(" disabled")
	}
}

func writeInput(w *htmlw.Writer, f *field) {
	switch f.Widget {
	case wSelect:
		control(w, "select", f)
		ariaLabel(w, f)
		disabled(w, f)
		w.Raw(">")
		for _, o := range f.Options {
			w.Raw(`<option value="`)
			w.Attr(o.Value)
			w.Raw(`"`)
			if o.Selected {
				w.Raw(" selected")
			}
			w.Raw(">")
			w.Text(o.Label)
			w.Raw("</option>")
		}
		w.Raw("</select>\n")
	case wLines, wJSON:
		control(w, "textarea", f)
		ariaLabel(w, f)
		if f.Widget == wLines {
			w.Raw(` rows="3"`)
			disabled(w, f)
			w.Raw(` placeholder="one per line">`)
		} else {
			w.Raw(` rows="5" class="json"`)
			disabled(w, f)
			w.Raw(` placeholder="JSON">`)
		}
		w.Text(f.Value)
		w.Raw("</textarea>\n")
	default:
		control(w, "input", f)
		w.Raw(` value="`)
		w.Attr(f.Value)
		w.Raw(`"`)
		ariaLabel(w, f)
		if f.Widget == wNumber {
			w.Raw(` inputmode="decimal" class="num"`)
		}
		if f.Default != "" {
			w.Raw(` placeholder="`)
			w.Attr(f.Default)
			w.Raw(`"`)
		}
		disabled(w, f)
		w.Raw(" autocomplete=\"off\" spellcheck=\"false\">\n")
	}
}

// source writes where f's value comes from, opening with text.
func source(w *htmlw.Writer, f *field, text string) {
	w.Raw(`<span class="src `)
	w.Attr(f.Source)
	w.Raw(`" data-source="`)
	w.Attr(f.Source)
	w.Raw(`">`)
	if text != "" {
		w.Raw(text)
	} else {
		w.Raw("from ")
		w.Text(f.SourceName)
	}
	w.Raw("</span>")
	if f.ReadOnly {
		w.Raw(" <span>(wins over this file)</span>")
	}
	w.Raw("</p>")
}

func writeMeta(w *htmlw.Writer, f *field) {
	w.Raw(`<p class="meta">`)
	with(w, f.Hint, "<span>", "</span> ")
	with(w, f.Default, "<span>default <code>", "</code></span> ")
	text := ""
	if f.Source == "default" {
		text = "not set in a file"
	}
	source(w, f, text)
}

func writeCellMeta(w *htmlw.Writer, f *field) {
	if f.Source != "default" {
		w.Raw(`<p class="meta">`)
		source(w, f, "")
	}
}

func writeErrors(w *htmlw.Writer, f *field) {
	for _, e := range f.Errors {
		w.Raw(`<p class="error" data-for="`)
		w.Attr(f.Name)
		w.Raw(`">`)
		w.Text(e)
		w.Raw("</p>")
	}
	for _, n := range f.Notes {
		w.Raw(`<p class="error note">`)
		w.Text(n)
		w.Raw("</p>")
	}
}
