package modelcat

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// dataFile is one file a model's dataset holds as an uploaded resource.
type dataFile struct {
	Path        string // on disk
	Rel         string // relative to the data directory, e.g. "internal/data/herg_karim.csv"
	Name        string // base name
	Format      string // CSV, TSV, TXT, Markdown
	Description string // what it is, its source and licence
	Source      string // source repository @ commit and path, when known
	Licence     string // licence / notes, when known
	Kind        string // "training data", "module data", "validation"
}

// dataExts are the file name endings taken as data shipped with a module.
var dataExts = []string{".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz", ".txt.gz"}

func formatOf(name string) string {
	n := strings.TrimSuffix(strings.ToLower(name), ".gz")
	switch {
	case strings.HasSuffix(n, ".csv"):
		return "CSV"
	case strings.HasSuffix(n, ".tsv"):
		return "TSV"
	case strings.HasSuffix(n, ".md"):
		return "Markdown"
	}
	return "TXT"
}

func isData(name string) bool {
	n := strings.ToLower(name)
	for _, e := range dataExts {
		if strings.HasSuffix(n, e) {
			return true
		}
	}
	return false
}

// sourceRow is one row of modules/internal/data/SOURCES.md.
type sourceRow struct {
	file, source, path, licence string
	usedBy                      []string
}

// readSources parses the table of <dir>/internal/data/SOURCES.md: file, rows,
// source repo @ commit, path in repo, used by, licence / notes.
func readSources(path string) map[string]sourceRow {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]sourceRow{}
	var cols []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			cols = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cols == nil {
			cols = cells
			continue
		}
		if len(cells) != len(cols) || strings.HasPrefix(cells[0], "---") {
			continue
		}
		var r sourceRow
		for i, c := range cols {
			switch {
			case c == "file":
				r.file = cells[i]
			case strings.HasPrefix(c, "source"):
				r.source = cells[i]
			case strings.HasPrefix(c, "path"):
				r.path = cells[i]
			case c == "used by":
				for _, u := range strings.Split(cells[i], ",") {
					r.usedBy = append(r.usedBy, strings.TrimSpace(u))
				}
			case strings.HasPrefix(c, "licence"):
				r.licence = cells[i]
			}
		}
		if r.file != "" {
			out[r.file] = r
		}
	}
	return out
}

// filesOf lists the files model name's dataset holds, from the data directory
// dir (the source tree's modules/): the shared training data of
// internal/data/SOURCES.md whose "used by" names the model, the data files under
// <dir>/<name>/ and its cross-validation reports (<dir>/<name>/model/CV*.md).
func filesOf(dir, name string) []dataFile {
	var out []dataFile
	shared := filepath.Join(dir, "internal", "data")
	for file, r := range readSources(filepath.Join(shared, "SOURCES.md")) {
		used := false
		for _, u := range r.usedBy {
			used = used || u == name
		}
		p := filepath.Join(shared, file)
		if st, err := os.Stat(p); !used || err != nil || !st.Mode().IsRegular() {
			continue
		}
		desc := "Training data of model " + name + " (modules/internal/data/" + file + "). Source: " + r.source
		if r.path != "" {
			desc += ", " + r.path
		}
		desc += ". Licence / notes: " + r.licence
		out = append(out, dataFile{Path: p, Rel: "internal/data/" + file, Name: file, Format: formatOf(file),
			Description: desc, Source: r.source + " " + r.path, Licence: r.licence, Kind: "training data"})
	}
	own := filepath.Join(dir, name)
	where := "the model card"
	if st, err := os.Stat(filepath.Join(own, "SOURCES.md")); err == nil && st.Mode().IsRegular() {
		where = "modules/" + name + "/SOURCES.md"
	}
	_ = filepath.WalkDir(own, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case isData(d.Name()):
			out = append(out, dataFile{Path: p, Rel: rel, Name: d.Name(), Format: formatOf(d.Name()),
				Description: "Data shipped with module " + name + " (modules/" + rel + "); sources and licences in " + where + ".",
				Kind:        "module data"})
		case rel == name+"/SOURCES.md":
			out = append(out, dataFile{Path: p, Rel: rel, Name: d.Name(), Format: "Markdown",
				Description: "Sources and licences of the data shipped with module " + name + " (modules/" + rel + ").",
				Kind:        "sources"})
		case strings.HasPrefix(d.Name(), "CV") && strings.HasSuffix(d.Name(), ".md"):
			out = append(out, dataFile{Path: p, Rel: rel, Name: d.Name(), Format: "Markdown",
				Description: "Cross-validation report of model " + name + " (modules/" + rel + "), written by modules/internal/train.",
				Kind:        "validation"})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out
}

// hashFile is the hex SHA-256 of the file at p.
func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
