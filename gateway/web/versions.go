package web

import (
	"net/url"

	"github.com/valyala/fasthttp"
)

// versionItem is one dataset version as the pages list it
// (dataset_version_list).
type versionItem struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Created     string `json:"created"`
}

// DiffHref is the version's diff page against the dataset now.
func (v versionItem) DiffHref(dataset string) string {
	return "/dataset/" + url.PathEscape(dataset) + "/versions/diff?from=" + url.QueryEscape(v.ID)
}

// datasetVersions reads the dataset's versions as the page's user; the
// page shows without them when they cannot be read.
func (w *Web) datasetVersions(r *req, id string) []versionItem {
	var items []versionItem
	if err := w.call(r, "dataset_version_list", map[string]any{"dataset": id}, &items); err != nil {
		w.log.Warn("web: dataset_version_list", "err", err)
		return nil
	}
	return items
}

// versionDiffData is the diff page's model.
type versionDiffData struct {
	Dataset  string
	From, To string
	Diff     struct {
		From     versionItem  `json:"from"`
		To       *versionItem `json:"to"`
		Metadata string       `json:"metadata"`
		Files    struct {
			Added   []map[string]any `json:"added"`
			Removed []map[string]any `json:"removed"`
			Changed []map[string]any `json:"changed"`
		} `json:"files"`
		Tables map[string]struct {
			By     string `json:"by"`
			Fields struct {
				Added   []map[string]any `json:"added"`
				Removed []map[string]any `json:"removed"`
				Changed []map[string]any `json:"changed"`
			} `json:"fields"`
			Rows map[string]struct {
				Count int `json:"count"`
			} `json:"rows"`
		} `json:"tables"`
	}
}

// versionDiffPage shows dataset_version_diff: ?from= (a version) and
// ?to= (a version; empty: the dataset now).
func (w *Web) versionDiffPage(r *req) {
	d := versionDiffData{Dataset: pathValue(r, "id"), From: string(r.ctx.QueryArgs().Peek("from")), To: string(r.ctx.QueryArgs().Peek("to"))}
	args := map[string]any{"dataset": d.Dataset, "from": d.From}
	if d.To != "" {
		args["to"] = d.To
	}
	if err := w.call(r, "dataset_version_diff", args, &d.Diff); err != nil {
		w.catalogFail(r, "Version", err)
		return
	}
	w.render(r, fasthttp.StatusOK, "version_diff", "Changes since "+d.Diff.From.Name, d, "", "")
}
