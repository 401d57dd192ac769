package citation

import (
	"encoding/json"
	"encoding/xml"
	"strconv"
)

// SchemaVersion is the DataCite Metadata Schema namespace both renderings
// declare (kernel 4; the XML's schemaLocation names version 4.6).
const SchemaVersion = "http://datacite.org/schema/kernel-4"

// dcName is a creator in DataCite's JSON.
type dcName struct {
	Name            string         `json:"name"`
	NameType        string         `json:"nameType,omitempty"`
	GivenName       string         `json:"givenName,omitempty"`
	FamilyName      string         `json:"familyName,omitempty"`
	NameIdentifiers []dcNameID     `json:"nameIdentifiers,omitempty"`
	Affiliation     []dcAffiliated `json:"affiliation,omitempty"`
}

type dcNameID struct {
	NameIdentifier       string `json:"nameIdentifier"`
	NameIdentifierScheme string `json:"nameIdentifierScheme"`
	SchemeURI            string `json:"schemeUri,omitempty"`
}

type dcAffiliated struct {
	Name string `json:"name"`
}

// DataCite is a work's DataCite 4 metadata in the JSON form of DataCite's
// REST API attributes (and of the DataCite JSON schema the tests check it
// against).
type DataCite struct {
	Identifiers []struct {
		Identifier     string `json:"identifier"`
		IdentifierType string `json:"identifierType"`
	} `json:"identifiers"`
	Creators []dcName `json:"creators"`
	Titles   []struct {
		Title string `json:"title"`
	} `json:"titles"`
	Publisher       string `json:"publisher"`
	PublicationYear string `json:"publicationYear"`
	Types           struct {
		ResourceType        string `json:"resourceType"`
		ResourceTypeGeneral string `json:"resourceTypeGeneral"`
	} `json:"types"`
	Subjects []struct {
		Subject string `json:"subject"`
	} `json:"subjects,omitempty"`
	Dates []struct {
		Date     string `json:"date"`
		DateType string `json:"dateType"`
	} `json:"dates"`
	RelatedIdentifiers []struct {
		RelatedIdentifier     string `json:"relatedIdentifier"`
		RelatedIdentifierType string `json:"relatedIdentifierType"`
		RelationType          string `json:"relationType"`
	} `json:"relatedIdentifiers,omitempty"`
	Sizes      []string `json:"sizes,omitempty"`
	Formats    []string `json:"formats,omitempty"`
	Version    string   `json:"version,omitempty"`
	RightsList []struct {
		Rights    string `json:"rights,omitempty"`
		RightsURI string `json:"rightsUri,omitempty"`
	} `json:"rightsList,omitempty"`
	Descriptions []struct {
		Description     string `json:"description"`
		DescriptionType string `json:"descriptionType"`
	} `json:"descriptions,omitempty"`
	SchemaVersion string `json:"schemaVersion"`
}

// DataCiteMetadata maps w to DataCite 4: the DOI (else the landing URL)
// as identifier, creators with ORCID and affiliation, title, publisher,
// publication year, resource type Dataset, keywords as subjects, the issue
// date, the dataset a version belongs to (IsVersionOf), sizes, formats,
// version, license and description.
func DataCiteMetadata(w Work) DataCite {
	var d DataCite
	d.SchemaVersion = SchemaVersion
	id, idType := w.URL, "URL"
	if w.DOI != "" {
		id, idType = w.DOI, "DOI"
	}
	d.Identifiers = append(d.Identifiers, struct {
		Identifier     string `json:"identifier"`
		IdentifierType string `json:"identifierType"`
	}{id, idType})
	for _, c := range w.Creators {
		n := dcName{Name: c.Name}
		switch {
		case c.Organization:
			n.NameType = "Organizational"
		case c.Family != "":
			n.NameType, n.GivenName, n.FamilyName = "Personal", c.Given, c.Family
		}
		if c.ORCID != "" {
			n.NameIdentifiers = []dcNameID{{NameIdentifier: "https://orcid.org/" + c.ORCID, NameIdentifierScheme: "ORCID", SchemeURI: "https://orcid.org"}}
		}
		if c.Affiliation != "" {
			n.Affiliation = []dcAffiliated{{Name: c.Affiliation}}
		}
		d.Creators = append(d.Creators, n)
	}
	if len(d.Creators) == 0 { // DataCite requires one: the publisher stands in, as DataCite advises for unknown creators
		d.Creators = []dcName{{Name: w.Publisher, NameType: "Organizational"}}
	}
	d.Titles = append(d.Titles, struct {
		Title string `json:"title"`
	}{w.Title})
	d.Publisher = w.Publisher
	d.PublicationYear = strconv.Itoa(w.Issued.Year())
	d.Types.ResourceType, d.Types.ResourceTypeGeneral = "Dataset", "Dataset"
	seen := map[string]bool{}
	for _, k := range w.Keywords {
		if !seen[k] {
			seen[k] = true
			d.Subjects = append(d.Subjects, struct {
				Subject string `json:"subject"`
			}{k})
		}
	}
	d.Dates = append(d.Dates, struct {
		Date     string `json:"date"`
		DateType string `json:"dateType"`
	}{w.Issued.Format("2006-01-02"), "Issued"})
	if w.DatasetURL != "" {
		d.RelatedIdentifiers = append(d.RelatedIdentifiers, struct {
			RelatedIdentifier     string `json:"relatedIdentifier"`
			RelatedIdentifierType string `json:"relatedIdentifierType"`
			RelationType          string `json:"relationType"`
		}{w.DatasetURL, "URL", "IsVersionOf"})
	}
	d.Sizes = unique(w.Sizes)
	d.Formats = unique(w.Formats)
	d.Version = w.Version
	if w.License != "" || w.LicenseURL != "" {
		d.RightsList = append(d.RightsList, struct {
			Rights    string `json:"rights,omitempty"`
			RightsURI string `json:"rightsUri,omitempty"`
		}{w.License, w.LicenseURL})
	}
	if w.Description != "" {
		d.Descriptions = append(d.Descriptions, struct {
			Description     string `json:"description"`
			DescriptionType string `json:"descriptionType"`
		}{w.Description, "Abstract"})
	}
	return d
}

// DataCiteJSON renders w's DataCite metadata as JSON.
func DataCiteJSON(w Work) []byte {
	out, _ := json.MarshalIndent(DataCiteMetadata(w), "", "  ") // cannot fail: plain types
	return append(out, '\n')
}

// The XML form of DataCite 4 (kernel-4.6 metadata.xsd).
type (
	xmlResource struct {
		XMLName        xml.Name      `xml:"resource"`
		XMLNS          string        `xml:"xmlns,attr"`
		XSI            string        `xml:"xmlns:xsi,attr"`
		SchemaLocation string        `xml:"xsi:schemaLocation,attr"`
		Identifier     xmlIdentifier `xml:"identifier"`
		Creators       []xmlCreator  `xml:"creators>creator"`
		Titles         []string      `xml:"titles>title"`
		Publisher      string        `xml:"publisher"`
		Year           string        `xml:"publicationYear"`
		ResourceType   xmlType       `xml:"resourceType"`
		Subjects       []string      `xml:"subjects>subject,omitempty"`
		Dates          []xmlDate     `xml:"dates>date,omitempty"`
		Related        []xmlRelated  `xml:"relatedIdentifiers>relatedIdentifier,omitempty"`
		Sizes          []string      `xml:"sizes>size,omitempty"`
		Formats        []string      `xml:"formats>format,omitempty"`
		Version        string        `xml:"version,omitempty"`
		Rights         []xmlRights   `xml:"rightsList>rights,omitempty"`
		Descriptions   []xmlDescr    `xml:"descriptions>description,omitempty"`
	}
	xmlIdentifier struct {
		Type  string `xml:"identifierType,attr"`
		Value string `xml:",chardata"`
	}
	xmlCreator struct {
		Name struct {
			Type  string `xml:"nameType,attr,omitempty"`
			Value string `xml:",chardata"`
		} `xml:"creatorName"`
		Given       string      `xml:"givenName,omitempty"`
		Family      string      `xml:"familyName,omitempty"`
		NameID      []xmlNameID `xml:"nameIdentifier,omitempty"`
		Affiliation []string    `xml:"affiliation,omitempty"`
	}
	xmlNameID struct {
		Scheme    string `xml:"nameIdentifierScheme,attr"`
		SchemeURI string `xml:"schemeURI,attr,omitempty"`
		Value     string `xml:",chardata"`
	}
	xmlType struct {
		General string `xml:"resourceTypeGeneral,attr"`
		Value   string `xml:",chardata"`
	}
	xmlDate struct {
		Type  string `xml:"dateType,attr"`
		Value string `xml:",chardata"`
	}
	xmlRelated struct {
		IDType   string `xml:"relatedIdentifierType,attr"`
		Relation string `xml:"relationType,attr"`
		Value    string `xml:",chardata"`
	}
	xmlRights struct {
		URI   string `xml:"rightsURI,attr,omitempty"`
		Value string `xml:",chardata"`
	}
	xmlDescr struct {
		Type  string `xml:"descriptionType,attr"`
		Value string `xml:",chardata"`
	}
)

// DataCiteXML renders w's DataCite metadata as XML of the kernel-4 schema.
func DataCiteXML(w Work) []byte {
	d := DataCiteMetadata(w)
	r := xmlResource{XMLNS: SchemaVersion, XSI: "http://www.w3.org/2001/XMLSchema-instance",
		SchemaLocation: SchemaVersion + " http://schema.datacite.org/meta/kernel-4.6/metadata.xsd",
		Identifier:     xmlIdentifier{Type: d.Identifiers[0].IdentifierType, Value: d.Identifiers[0].Identifier},
		Publisher:      d.Publisher, Year: d.PublicationYear, ResourceType: xmlType{General: d.Types.ResourceTypeGeneral, Value: d.Types.ResourceType},
		Sizes: d.Sizes, Formats: d.Formats, Version: d.Version}
	for _, c := range d.Creators {
		var x xmlCreator
		x.Name.Type, x.Name.Value, x.Given, x.Family = c.NameType, c.Name, c.GivenName, c.FamilyName
		for _, id := range c.NameIdentifiers {
			x.NameID = append(x.NameID, xmlNameID{Scheme: id.NameIdentifierScheme, SchemeURI: id.SchemeURI, Value: id.NameIdentifier})
		}
		for _, a := range c.Affiliation {
			x.Affiliation = append(x.Affiliation, a.Name)
		}
		r.Creators = append(r.Creators, x)
	}
	for _, t := range d.Titles {
		r.Titles = append(r.Titles, t.Title)
	}
	for _, s := range d.Subjects {
		r.Subjects = append(r.Subjects, s.Subject)
	}
	for _, dt := range d.Dates {
		r.Dates = append(r.Dates, xmlDate{Type: dt.DateType, Value: dt.Date})
	}
	for _, rel := range d.RelatedIdentifiers {
		r.Related = append(r.Related, xmlRelated{IDType: rel.RelatedIdentifierType, Relation: rel.RelationType, Value: rel.RelatedIdentifier})
	}
	for _, rt := range d.RightsList {
		r.Rights = append(r.Rights, xmlRights{URI: rt.RightsURI, Value: rt.Rights})
	}
	for _, de := range d.Descriptions {
		r.Descriptions = append(r.Descriptions, xmlDescr{Type: de.DescriptionType, Value: de.Description})
	}
	out, _ := xml.MarshalIndent(r, "", "  ") // cannot fail: plain types
	return append(append([]byte(xml.Header), out...), '\n')
}

func unique(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
