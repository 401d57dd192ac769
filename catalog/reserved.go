package catalog

import (
	"strconv"
	"strings"
)

// ReservedDatasetPrefix starts the names of the datasets the gateway keeps
// for its models (gateway/modelcat: "model-herg"). Only sysadmins (the
// publisher acts as one) may give a dataset such a name, so that no user
// can hold a model's name before the publisher, or take it over by a
// rename; the publisher also adopts such a dataset only in its own
// organization.
const ReservedDatasetPrefix = "model-"

// reservedNameErrors is the validation message of field "name" when caller c
// may not give name to a dataset: a name starting with ReservedDatasetPrefix
// that is new to the dataset (base is the stored dataset, nil on create)
// and a caller who is not a sysadmin. A dataset keeps a reserved name it
// holds already.
func reservedNameErrors(c Caller, name string, base *Dataset) []string {
	if c.Sysadmin || !strings.HasPrefix(name, ReservedDatasetPrefix) || base != nil && base.Name == name {
		return nil
	}
	return []string{"Names starting with " + strconv.Quote(ReservedDatasetPrefix) + " are reserved for the datasets of the models the gateway serves"}
}
