package chemindex

import (
	"compress/gzip"
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
)

//go:embed data/*.csv.gz
var dataFS embed.FS

// Source describes where compound facts come from.
type Source struct {
	// ID names the source in answers ("invitrodb", "httk", "datastore:<id>").
	ID string `json:"id"`
	// Title says what it is and where it was taken from.
	Title string `json:"title"`
}

// The embedded sources (provenance: data/SOURCES.md).
var (
	sourceInvitrodb = Source{ID: "invitrodb", Title: "EPA ToxCast invitrodb v4.3 modeling table (DTXSID, preferred name, CASRN, DSSTox SMILES), SID-6921/MitoTox-AI@dc95230 data/processed/mito_modeling_table.csv"}
	sourceHTTK      = Source{ID: "httk", Title: "USEPA httk 2.7.4 chem.physical_and_invitro.data (compound names and synonyms by DTXSID and CAS), cran/httk@b0a4933"}
)

// Compound is what is known of one chemical, each field with its source.
type Compound struct {
	DTXSID   string   `json:"dtxsid,omitempty"`
	Name     string   `json:"preferred_name,omitempty"`
	CAS      string   `json:"cas,omitempty"`
	SMILES   string   `json:"smiles,omitempty"`
	InChIKey string   `json:"inchikey,omitempty"`
	Synonyms []string `json:"synonyms,omitempty"`
	// Sources maps each field above to the id of the Source it came from.
	Sources map[string]string `json:"sources"`

	st *Structure // parsed SMILES (nil when none or unparsable)
}

// set records v as field f from src unless the field already has a value.
func (c *Compound) set(f string, dst *string, v, src string) {
	v = strings.TrimSpace(v)
	if v == "" || *dst != "" {
		return
	}
	*dst = v
	if c.Sources == nil {
		c.Sources = map[string]string{}
	}
	c.Sources[f] = src
}

// addSynonym adds name unless it is already the name or a synonym.
func (c *Compound) addSynonym(name, src string) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 300 {
		return
	}
	n := normName(name)
	if normName(c.Name) == n {
		return
	}
	for _, s := range c.Synonyms {
		if normName(s) == n {
			return
		}
	}
	c.Synonyms = append(c.Synonyms, name)
	if c.Sources == nil {
		c.Sources = map[string]string{}
	}
	if _, ok := c.Sources["synonyms"]; !ok {
		c.Sources["synonyms"] = src
	}
}

// readGzipCSV reads an embedded gzip CSV file into records keyed by header.
func readGzipCSV(name string, fn func(rec map[string]string)) error {
	f, err := dataFS.Open(name)
	if err != nil {
		return fmt.Errorf("chemindex: open %s: %w", name, err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("chemindex: %s: %w", name, err)
	}
	r := csv.NewReader(z)
	head, err := r.Read()
	if err != nil {
		return fmt.Errorf("chemindex: %s header: %w", name, err)
	}
	for {
		row, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("chemindex: %s: %w", name, err)
		}
		rec := make(map[string]string, len(head))
		for i, h := range head {
			if i < len(row) {
				rec[h] = row[i]
			}
		}
		fn(rec)
	}
}

// embeddedCompounds reads the shipped tables: invitrodb's compounds, then
// httk's names and synonyms merged by DTXSID (httk's compounds without an
// invitrodb row are added without a structure).
func embeddedCompounds() ([]*Compound, error) {
	var out []*Compound
	byDTX := map[string]*Compound{}
	err := readGzipCSV("data/compounds_invitrodb.csv.gz", func(r map[string]string) {
		c := &Compound{}
		c.set("dtxsid", &c.DTXSID, r["DTXSID"], sourceInvitrodb.ID)
		c.set("preferred_name", &c.Name, r["PREFERRED_NAME"], sourceInvitrodb.ID)
		c.set("cas", &c.CAS, r["CASRN"], sourceInvitrodb.ID)
		c.set("smiles", &c.SMILES, r["canonical_smiles"], sourceInvitrodb.ID)
		if c.DTXSID != "" {
			byDTX[strings.ToUpper(c.DTXSID)] = c
		}
		out = append(out, c)
	})
	if err != nil {
		return nil, err
	}
	err = readGzipCSV("data/synonyms_httk.csv.gz", func(r map[string]string) {
		key := strings.ToUpper(strings.TrimSpace(r["DTXSID"]))
		c := byDTX[key]
		if c == nil {
			c = &Compound{}
			c.set("dtxsid", &c.DTXSID, r["DTXSID"], sourceHTTK.ID)
			if key != "" {
				byDTX[key] = c
			}
			out = append(out, c)
		}
		c.set("preferred_name", &c.Name, r["Compound"], sourceHTTK.ID)
		c.set("cas", &c.CAS, r["CAS"], sourceHTTK.ID)
		for _, s := range strings.Split(r["All.Compound.Names"], "|") {
			if looksLikeCAS(s) || isDTXSID(s) {
				continue
			}
			c.addSynonym(s, sourceHTTK.ID)
		}
	})
	if err != nil {
		return nil, err
	}
	for _, c := range out {
		if c.SMILES != "" {
			c.st, _ = Standardize(c.SMILES)
		}
	}
	return out, nil
}

// DictionaryColumns are the column names (compared in lower case) a
// compound dictionary table is read by; the first present wins.
var DictionaryColumns = map[string][]string{
	"dtxsid":         {"dtxsid"},
	"preferred_name": {"preferred_name", "name", "compound", "chemical_name"},
	"cas":            {"casrn", "cas", "cas_number", "cas_rn"},
	"smiles":         {"smiles", "canonical_smiles", "qsar_ready_smiles"},
	"inchikey":       {"inchikey", "inchi_key"},
	"synonyms":       {"synonyms", "all_names"},
}

// DictionaryCompound turns one row of a registered dictionary table into a
// compound (nil when it names nothing). cols maps DictionaryColumns' keys
// to the table's column names; synonyms are split on '|' and ';'.
func DictionaryCompound(row map[string]string, cols map[string]string, src string) *Compound {
	c := &Compound{}
	get := func(k string) string { return row[cols[k]] }
	c.set("dtxsid", &c.DTXSID, get("dtxsid"), src)
	c.set("preferred_name", &c.Name, get("preferred_name"), src)
	c.set("cas", &c.CAS, get("cas"), src)
	c.set("smiles", &c.SMILES, get("smiles"), src)
	c.set("inchikey", &c.InChIKey, strings.ToUpper(get("inchikey")), src)
	for _, s := range strings.FieldsFunc(get("synonyms"), func(r rune) bool { return r == '|' || r == ';' }) {
		c.addSynonym(s, src)
	}
	if c.DTXSID == "" && c.Name == "" && c.CAS == "" && c.SMILES == "" && c.InChIKey == "" {
		return nil
	}
	if c.SMILES != "" {
		c.st, _ = Standardize(c.SMILES)
	}
	return c
}

// DictionaryColumnMap picks, for each of DictionaryColumns' keys, the
// first of the table's columns that matches (case-insensitive).
func DictionaryColumnMap(columns []string) map[string]string {
	lower := map[string]string{}
	for _, c := range columns {
		if _, ok := lower[strings.ToLower(c)]; !ok {
			lower[strings.ToLower(c)] = c
		}
	}
	out := map[string]string{}
	for k, names := range DictionaryColumns {
		for _, n := range names {
			if c, ok := lower[n]; ok {
				out[k] = c
				break
			}
		}
	}
	return out
}
