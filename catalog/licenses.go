package catalog

// License is one entry of CKAN's default license register.
type License struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	URL            string `json:"url"`
	Family         string `json:"family"`
	Maintainer     string `json:"maintainer"`
	Status         string `json:"status"`
	ODConformance  string `json:"od_conformance"`
	OSDConformance string `json:"osd_conformance"`
	IsGeneric      bool   `json:"is_generic"`
	IsOKDCompliant bool   `json:"is_okd_compliant"`
	IsOSICompliant bool   `json:"is_osi_compliant"`
	DomainContent  bool   `json:"domain_content"`
	DomainData     bool   `json:"domain_data"`
	DomainSoftware bool   `json:"domain_software"`
}

func lic(id, title, url string, open, generic bool) License {
	od := "not reviewed"
	if open {
		od = "approved"
	}
	return License{ID: id, Title: title, URL: url, Status: "active", ODConformance: od, OSDConformance: "not reviewed", IsGeneric: generic, IsOKDCompliant: open}
}

// Licenses is CKAN's default license list, in CKAN's order.
var Licenses = []License{
	lic("notspecified", "License not specified", "", false, true),
	lic("odc-pddl", "Open Data Commons Public Domain Dedication and License (PDDL)", "http://www.opendefinition.org/licenses/odc-pddl", true, false),
	lic("odc-odbl", "Open Data Commons Open Database License (ODbL)", "http://www.opendefinition.org/licenses/odc-odbl", true, false),
	lic("odc-by", "Open Data Commons Attribution License", "http://www.opendefinition.org/licenses/odc-by", true, false),
	lic("cc-zero", "Creative Commons CCZero", "http://www.opendefinition.org/licenses/cc-zero", true, false),
	lic("cc-by", "Creative Commons Attribution", "http://www.opendefinition.org/licenses/cc-by", true, false),
	lic("cc-by-sa", "Creative Commons Attribution Share-Alike", "http://www.opendefinition.org/licenses/cc-by-sa", true, false),
	lic("gfdl", "GNU Free Documentation License", "http://www.opendefinition.org/licenses/gfdl", true, false),
	lic("other-open", "Other (Open)", "", true, true),
	lic("other-pd", "Other (Public Domain)", "", true, true),
	lic("other-at", "Other (Attribution)", "", true, true),
	lic("uk-ogl", "UK Open Government Licence (OGL)", "http://reference.data.gov.uk/id/open-government-licence", true, false),
	lic("cc-nc", "Creative Commons Non-Commercial (Any)", "http://creativecommons.org/licenses/by-nc/2.0/", false, false),
	lic("other-nc", "Other (Non-Commercial)", "", false, true),
	lic("other-closed", "Other (Not Open)", "", false, true),
}

var licenseByID = func() map[string]*License {
	m := map[string]*License{}
	for i := range Licenses {
		m[Licenses[i].ID] = &Licenses[i]
	}
	return m
}()
