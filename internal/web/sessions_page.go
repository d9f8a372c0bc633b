package web

import (
	"errors"
	"io/fs"
	"net/http"
)

type sessionsData struct {
	Nav      string
	Dir      string
	Sessions []sessionInfo
}

type sessionData struct {
	Nav      string
	Session  *sessionView
	Timeline *timeline
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	list, err := s.sums.list(r.Context())
	if err != nil {
		http.Error(w, "rally web: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.render(w, http.StatusOK, "sessions.html", &sessionsData{Nav: "sessions", Dir: s.cfg.SessionDir, Sessions: list})
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	v, err := loadSession(s.cfg.SessionDir, r.PathValue("name"))
	switch {
	case errors.Is(err, fs.ErrNotExist) || (err != nil && !validSessionName(r.PathValue("name"))):
		http.Error(w, "rally web: no such session", http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, "rally web: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.render(w, http.StatusOK, "session.html", &sessionData{Nav: "sessions", Session: v, Timeline: drawTimeline(v)})
}
