package web

import (
	"errors"
	"io/fs"
	"net/http"
	"strconv"

	"github.com/rally-agent/rally/internal/htmlw"
)

// pageSize is how many sessions one page of the list shows: reading a
// session file costs a fraction of a millisecond, and a first visit to a
// project with thousands of them should still open at once.
const pageSize = 100

type sessionsData struct {
	Nav      string
	Dir      string
	Sessions []sessionInfo
	// From and To number the rows shown (1-based), of Total.
	From, To, Total  int
	Newer, Older     string // links to the neighbouring pages, if any
	All, ShowAllLink bool
}

type sessionData struct {
	Nav      string
	Session  *sessionView
	Timeline *timeline
	Pager    *pager // the part of the transcript shown
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	d := &sessionsData{Nav: "sessions", Dir: s.cfg.SessionDir, All: r.FormValue("all") != ""}
	page, _ := strconv.Atoi(r.FormValue("page"))
	page = max(page, 1)
	from, to := (page-1)*pageSize, page*pageSize
	if d.All {
		from, to = 0, -1
	}
	list, total, err := s.sums.list(r.Context(), from, to)
	if err != nil {
		http.Error(w, "rally web: "+err.Error(), http.StatusInternalServerError)
		return
	}
	d.Sessions, d.Total = list, total
	d.From, d.To = min(from+1, total), min(from+len(list), total)
	if !d.All {
		if page > 1 {
			d.Newer = "/sessions?page=" + strconv.Itoa(page-1)
		}
		if d.To < total {
			d.Older = "/sessions?page=" + strconv.Itoa(page+1)
		}
		d.ShowAllLink = total > pageSize
	}
	status := http.StatusOK
	if len(list) == 0 && total > 0 {
		status = http.StatusNotFound // a page past the last: say so, not "No sessions yet"
	}
	s.render(w, status, func(hw *htmlw.Writer) { writeSessions(hw, d) })
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	release, err := s.loads.acquire(r.Context())
	if err != nil {
		return // the client left while waiting
	}
	defer release()
	page, _ := strconv.Atoi(r.FormValue("page"))
	v, pg, err := loadSessionPage(r.Context(), s.cfg.SessionDir, r.PathValue("name"), s.cfg.Keys, page)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		http.Error(w, "rally web: no such session", http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, "rally web: "+err.Error(), http.StatusInternalServerError)
		return
	}
	d := &sessionData{Nav: "sessions", Session: v, Timeline: drawTimeline(v), Pager: pg}
	s.render(w, http.StatusOK, func(hw *htmlw.Writer) { writeSession(hw, d) })
}
