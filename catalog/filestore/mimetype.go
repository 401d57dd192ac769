package filestore

import (
	"net/http"
	"path"
	"strings"
)

// mimetypes maps file extensions to media types, as Python's mimetypes
// module (which CKAN uses) maps them, plus the chemistry and data formats
// a toxicology catalog holds. A table of our own keeps the answer the same
// on every machine (Go's mime package reads the system's tables).
var mimetypes = map[string]string{
	".csv": "text/csv", ".tsv": "text/tab-separated-values", ".tab": "text/tab-separated-values",
	".txt": "text/plain", ".json": "application/json", ".jsonl": "application/jsonl",
	".xml": "application/xml", ".html": "text/html", ".htm": "text/html", ".md": "text/markdown",
	".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
	".tar": "application/x-tar", ".xls": "application/vnd.ms-excel",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".ods":  "application/vnd.oasis.opendocument.spreadsheet", ".parquet": "application/vnd.apache.parquet",
	".sdf": "chemical/x-mdl-sdfile", ".mol": "chemical/x-mdl-molfile", ".smi": "chemical/x-daylight-smiles",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".svg": "image/svg+xml",
	".yaml": "application/yaml", ".yml": "application/yaml", ".rdf": "application/rdf+xml", ".ttl": "text/turtle",
	".wasm": "application/wasm", ".h5": "application/x-hdf5", ".nc": "application/x-netcdf",
}

// GuessMimetype guesses a media type from a file name, then from the first
// bytes of its content ("application/octet-stream" when both fail).
func GuessMimetype(filename string, head []byte) string {
	if t, ok := mimetypes[strings.ToLower(path.Ext(filename))]; ok {
		return t
	}
	if len(head) == 0 {
		return "application/octet-stream"
	}
	t := http.DetectContentType(head)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t
}
