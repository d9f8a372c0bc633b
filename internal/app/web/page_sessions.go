package web

import "github.com/rally-agent/rally/internal/htmlw"

// The pages are written by Go code with htmlw rather than by
// html/template: executing a template switches off the linker's method
// dead-code elimination for the whole binary (see package htmlw). Each
// value goes through the htmlw method for its context: Text for element
// content, Attr for attribute values, URL/URLPath/URLQuery for links.

// writeHead opens a page: the header with the navigation, nav marking
// the current section.
func writeHead(w *htmlw.Writer, nav string) {
	w.Raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>rally · ")
	w.Text(nav)
	w.Raw("</title>\n<link rel=\"stylesheet\" href=\"/static/style.css\">\n</head>\n<body>\n<header class=\"top\">\n" +
		"<span class=\"brand\">rally</span>\n<nav><a href=\"/settings\"")
	current(w, nav == "settings")
	w.Raw(">Settings</a>\n<a href=\"/sessions\"")
	current(w, nav == "sessions")
	w.Raw(">Sessions</a></nav>\n</header>\n<main>\n")
}

func current(w *htmlw.Writer, yes bool) {
	if yes {
		w.Raw(` aria-current="page"`)
	}
}

const foot = "</main>\n</body>\n</html>\n"

// titleOr writes title, or name when there is none.
func titleOr(w *htmlw.Writer, title, name string) {
	if title == "" {
		title = name
	}
	w.Text(title)
}

// countCell writes n, in bold (open is the <b> tag) when it is not 0.
func countCell(w *htmlw.Writer, n int, open string) {
	if n == 0 {
		w.Raw("0")
		return
	}
	w.Raw(open)
	w.Int(n)
	w.Raw("</b>")
}

// fromTo writes "from–to of total", the rows a page shows.
func fromTo(w *htmlw.Writer, from, to, total int) {
	w.Int(from)
	w.Raw("–")
	w.Int(to)
	w.Raw(" of ")
	w.Int(total)
}

// link writes " · <a href=URL id=ID>label</a>" when url is set.
func link(w *htmlw.Writer, url, id, label string) {
	if url == "" {
		return
	}
	w.Raw(` · <a href="`)
	w.URL(url)
	w.Raw(`" id="` + id + `">` + label + `</a>`)
}

func writeSessions(w *htmlw.Writer, d *sessionsData) {
	writeHead(w, d.Nav)
	w.Raw("\n<h1>Sessions</h1>\n<p class=\"lede\">The session files of this project, newest first, in <code>")
	w.Text(d.Dir)
	w.Raw("</code>.</p>\n")
	switch {
	case len(d.Sessions) > 0:
		w.Raw("<table class=\"sessions\" id=\"sessions\">\n<thead><tr><th>started</th><th>session</th><th>model</th>" +
			"<th class=\"n\">messages</th><th class=\"n\">retries</th><th class=\"n\">failed</th><th class=\"n\">duration</th></tr></thead>\n<tbody>")
		for i := range d.Sessions {
			s := &d.Sessions[i]
			w.Raw("\n<tr><td><time>")
			w.Text(date(s.Start))
			w.Raw("</time></td>\n<td><a href=\"/sessions/")
			w.URLPath(s.Name)
			w.Raw(`">`)
			titleOr(w, s.Title, s.Name)
			w.Raw("</a>")
			if s.Err != "" {
				w.Raw(`<p class="error">`)
				w.Text(s.Err)
				w.Raw("</p>")
			}
			w.Raw("</td>\n<td>")
			w.Text(s.Model)
			w.Raw(`</td><td class="n">`)
			w.Int(s.Messages)
			w.Raw(`</td><td class="n">`)
			countCell(w, s.Retries, "<b>")
			w.Raw("</td>\n<td class=\"n\">")
			countCell(w, s.Failed, `<b class="bad">`)
			w.Raw(`</td><td class="n">`)
			w.Text(dur(s.Duration()))
			w.Raw("</td></tr>")
		}
		w.Raw("\n</tbody></table>\n<p class=\"pager\">")
		fromTo(w, d.From, d.To, d.Total)
		link(w, d.Newer, "newer", "← newer")
		link(w, d.Older, "older", "older →")
		if d.ShowAllLink {
			w.Raw(` · <a href="/sessions?all=1">all on one page</a>`)
		}
		w.Raw("</p>\n")
	case d.Total > 0:
		w.Raw(`<p id="past">No sessions on this page: there are `)
		w.Int(d.Total)
		w.Raw(", and this page is past the last. <a href=\"/sessions\">First page</a></p>\n")
	default:
		w.Raw("<p>No sessions yet. Run <code>rally -p \"…\"</code> here and it appears.</p>")
	}
	w.Raw("\n" + foot + "\n")
}

// with writes open, s as text and close when s is not empty.
func with(w *htmlw.Writer, s, open, close string) {
	if s == "" {
		return
	}
	w.Raw(open)
	w.Text(s)
	w.Raw(close)
}

func writeSession(w *htmlw.Writer, d *sessionData) {
	writeHead(w, d.Nav)
	w.Raw("\n")
	if v := d.Session; v != nil {
		w.Raw("\n<p><a href=\"/sessions\">← Sessions</a></p>\n<h1>")
		titleOr(w, v.Title, v.Name)
		w.Raw("</h1>\n<p class=\"lede\"><code>")
		w.Text(v.Name)
		w.Raw("</code> · started ")
		w.Text(date(v.Start))
		w.Raw(" · ")
		w.Text(dur(v.Duration()))
		w.Raw(" · ")
		w.Int(v.Messages)
		w.Raw(" messages · ")
		w.Text(v.CallSummary())
		with(w, v.Model, " · last model <code>", "</code>")
		w.Raw("</p>\n")
		if len(v.Warnings) > 0 {
			w.Raw(`<div class="banner errors"><p>Read with warnings:</p><ul>`)
			for _, s := range v.Warnings {
				w.Raw("<li>")
				w.Text(s)
				w.Raw("</li>")
			}
			w.Raw("</ul></div>")
		}
		w.Raw("\n")
	}
	w.Raw("\n")
	if d.Timeline != nil {
		writeTimeline(w, d.Timeline)
	}
	w.Raw("\n<h2>Transcript</h2>\n")
	if p := d.Pager; p != nil && p.Pages > 1 {
		w.Raw(`<p class="pager" id="transcript-pager">entries `)
		fromTo(w, p.From, p.To, p.Total)
		w.Raw(" · page ")
		w.Int(p.Page)
		w.Raw(" of ")
		w.Int(p.Pages)
		link(w, p.Prev, "prev", "← earlier")
		link(w, p.Next, "next", "later →")
		w.Raw("</p>")
	}
	w.Raw("\n<div class=\"transcript\" id=\"transcript\">")
	if d.Session != nil {
		for i := range d.Session.Entries {
			writeEntry(w, &d.Session.Entries[i])
		}
	}
	w.Raw("\n</div>\n" + foot + "\n")
}

func writeEntry(w *htmlw.Writer, e *entryView) {
	w.Raw("\n<article id=\"e-")
	w.Attr(e.ID)
	w.Raw(`" class="`)
	w.Attr(e.CSS)
	w.Raw("\">\n<header><span class=\"who\">")
	w.Text(e.Who)
	w.Raw("</span> <time>")
	w.Text(e.When)
	w.Raw("</time>")
	with(w, e.Model, ` <code class="model">`, "</code>")
	with(w, e.Took, ` <span class="dim">`, "</span>")
	w.Raw("\n")
	with(w, e.Badge, `<span class="badge">`, "</span>")
	if e.IsError {
		w.Raw(`<span class="badge bad">error</span>`)
	}
	if e.Abort {
		w.Raw(`<span class="badge">aborted</span>`)
	}
	w.Raw("</header>\n")
	switch {
	case e.Compaction:
		w.Raw(`<p class="dim">Older messages were summarised (`)
		w.Int(e.TokensBefore)
		w.Raw(` tokens before):</p><pre class="text">`)
		w.Text(e.Text)
		w.Raw("</pre>\n")
	case e.ModelChange:
		w.Raw(`<p class="dim">model changed to <code>`)
		w.Text(e.Model)
		w.Raw("</code></p>\n")
	case e.Note:
		w.Raw(`<p class="dim">`)
		w.Text(e.Type)
		w.Raw(" entry")
		with(w, e.Text, ": ", "")
		w.Raw("</p>\n")
	case e.Role != "":
		with(w, e.Text, `<pre class="args">`, "</pre>")
		w.Raw("\n")
	}
	for i := range e.Blocks {
		b := &e.Blocks[i]
		switch {
		case b.Long:
			w.Raw(`<details class="long"><summary>`)
			w.Int(b.Lines)
			w.Raw(` lines</summary><pre class="text">`)
			w.Text(b.Text)
			w.Raw("</pre></details>\n")
		case b.IsText:
			w.Raw(`<pre class="text">`)
			w.Text(b.Text)
			w.Raw("</pre>\n")
		case b.IsThinking:
			w.Raw(`<details class="thinking"><summary>thinking</summary><pre class="text">`)
			w.Text(b.Text)
			w.Raw("</pre></details>\n")
		case b.IsToolCall:
			w.Raw(`<div class="toolcall"><code>`)
			w.Text(b.Name)
			w.Raw(`</code><pre class="args">`)
			w.Text(b.Text)
			w.Raw("</pre></div>\n")
		default:
			w.Raw(`<p class="dim">[image `)
			w.Text(b.Text)
			w.Raw("]</p>\n")
		}
	}
	if e.ErrClass != "" {
		w.Raw(`<p class="error"><b>`)
		w.Text(e.ErrClass)
		w.Raw("</b>: ")
		w.Text(e.Error)
		w.Raw("</p>")
		with(w, e.Outcome, `<p class="dim outcome">`, "</p>")
	}
	w.Raw("\n</article>")
}
