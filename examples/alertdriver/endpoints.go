package main

import (
	"encoding/json"
	"net/http"
)

// driverStatus is the /driver document.
type driverStatus struct {
	State    string     `json:"state"`
	Ready    bool       `json:"ready"`
	Released bool       `json:"released"`
	Work     []heldWork `json:"work"`
}

func (d *driver) status() driverStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := driverStatus{State: d.state, Ready: d.ready, Work: append([]heldWork{}, d.held...)}
	select {
	case <-d.release:
		s.Released = true
		s.Work = []heldWork{}
	default:
	}
	return s
}

func (d *driver) serveStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	d.mu.Lock()
	failed := d.failed
	d.mu.Unlock()
	if failed != nil {
		http.Error(w, "alertdriver: "+failed.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, d.status())
}

func (d *driver) serveRelease(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	d.relOnce.Do(func() { close(d.release) })
	writeJSON(w, d.status())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}
