package catalog

import "context"

func init() {
	registerInternal("user_package_counts", "Active datasets per creator (user id), for the gateway's user dicts.", userPackageCounts)
}

// userPackageCounts answers {user id: number of active datasets it
// created}, CKAN's number_created_packages, for the gateway's user
// actions (the users live in the gateway's identity store, the datasets
// here).
func userPackageCounts(_ context.Context, s *Service, _ *Request) (any, error) {
	s.st.mu.RLock()
	defer s.st.mu.RUnlock()
	out := map[string]int{}
	for _, d := range s.st.datasets {
		if d.State == StateActive {
			out[d.CreatorUserID]++
		}
	}
	return out, nil
}
