package testweb

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// serveControl answers on control.test:
//
//	GET  /audit[?host=H]          the audit report (one host's with ?host)
//	GET  /truth?seed=URL[&seed=…] the truth for the seeds (default: Seeds())
//	GET  /requests?host=H&limit=N recent requests, oldest first
//	GET  /hosts                   every host with its robots.txt profile and required delay
//	POST /reset                   forget the audit
func (w *Web) serveControl(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch r.URL.Path {
	case "/audit":
		rep := w.audit.Report()
		if h := q.Get("host"); h != "" {
			hr := rep.Host(h)
			if hr == nil {
				jsonError(rw, http.StatusNotFound, "no requests recorded for host "+h)
				return
			}
			writeJSON(rw, hr)
			return
		}
		writeJSON(rw, rep)
	case "/truth":
		seeds := q["seed"]
		if len(seeds) == 0 {
			seeds = w.Seeds()
		}
		writeJSON(rw, w.Truth(seeds))
	case "/requests":
		limit := 1000
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				jsonError(rw, http.StatusBadRequest, "limit must be a positive whole number")
				return
			}
			limit = n
		}
		reqs := w.audit.Requests(q.Get("host"))
		if len(reqs) > limit {
			reqs = reqs[len(reqs)-limit:]
		}
		writeJSON(rw, reqs)
	case "/hosts":
		type hostInfo struct {
			Host            string `json:"host"`
			Profile         string `json:"robotsProfile"`
			RequiredDelayMs int64  `json:"requiredDelayMs"`
		}
		var out []hostInfo
		for _, h := range w.names {
			out = append(out, hostInfo{h, w.sites[h].robots().profile, w.RequiredDelay(h).Milliseconds()})
		}
		writeJSON(rw, out)
	case "/reset":
		if r.Method != http.MethodPost {
			jsonError(rw, http.StatusMethodNotAllowed, "POST to reset")
			return
		}
		w.audit.Reset()
		writeJSON(rw, map[string]bool{"reset": true})
	default:
		jsonError(rw, http.StatusNotFound, "unknown control endpoint; see /audit, /truth, /requests, /hosts, /reset")
	}
}

func writeJSON(rw http.ResponseWriter, v any) {
	rw.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(rw)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func jsonError(rw http.ResponseWriter, code int, msg string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	_ = json.NewEncoder(rw).Encode(map[string]string{"error": msg})
}
