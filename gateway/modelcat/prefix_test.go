package modelcat

import (
	"testing"

	"toxgate/catalog"
)

// The models' dataset names are the ones the catalog reserves for sysadmins.
func TestDatasetPrefixIsReserved(t *testing.T) {
	if DatasetPrefix != catalog.ReservedDatasetPrefix {
		t.Fatalf("modelcat names datasets %q..., the catalog reserves %q...", DatasetPrefix, catalog.ReservedDatasetPrefix)
	}
}
