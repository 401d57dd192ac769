package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sort"

	"toxgate/catalog/ckan"
)

func init() {
	registerInternal("dataset_version_for_input", "The dataset version holding a resource's current file, made when the file changed since the dataset's last version (scoring jobs' input).", datasetVersionForInput)
}

// datasetVersionForInput answers the scoring jobs' "which version holds
// the file of resource id as it is now?": the dataset's latest version when
// it holds the resource's current file, else a new version ("auto-" and the
// time) made for the caller. Those who may read the resource ask it
// (resource_show's rule): a reader cannot change the file, so at most one
// version is made per change of it, within catalog.max_versions_per_dataset.
func datasetVersionForInput(ctx context.Context, s *Service, r *Request) (any, error) {
	id, _ := str(r.Data["id"])
	d, i := s.st.lookupResource(id)
	if d == nil {
		return nil, ckan.NotFound("Resource was not found.")
	}
	fileID := d.Resources[i].FileID
	list, err := s.vs.ofDataset(ctx, d.ID, VersionActive)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list, func(a, b int) bool { return list[a].Created.After(list[b].Created) })
	if len(list) > 0 {
		for _, vr := range list[0].Resources {
			if vr.ID == id && vr.FileID == fileID {
				return versionDict(list[0]), nil
			}
		}
	}
	var b [2]byte
	_, _ = rand.Read(b[:])
	name := "auto-" + now().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
	v, err := s.CreateVersion(ctx, r.Caller, d.ID, name, "Made for a scoring job's input", r.SiteURL)
	if err != nil {
		return nil, err
	}
	return versionDict(v), nil
}
