package catalog

import (
	"context"

	"toxgate/catalog/ckan"
)

func init() {
	registerInternal("user_package_counts", "Active datasets per creator (user id), for the gateway's user dicts (include_private: private ones too).", userPackageCounts)
}

// userPackageCounts answers {user id: number of active datasets it
// created}, CKAN's number_created_packages, for the gateway's user
// actions (the users live in the gateway's identity store, the datasets
// here). Only public datasets count unless include_private is set, which
// the gateway sets for a user's own dict and for sysadmins (CKAN's
// count_private_and_draft_datasets).
func userPackageCounts(_ context.Context, s *Service, r *Request) (any, error) {
	withPrivate := ckan.SchemaBool(r.Data["include_private"])
	return viewed2(s.st, func() (any, error) {
		out := map[string]int{}
		for _, d := range s.st.datasets {
			if d.State == StateActive && (withPrivate || !d.Private) {
				out[d.CreatorUserID]++
			}
		}
		return out, nil
	})
}
