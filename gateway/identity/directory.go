package identity

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/plugins/contract"
)

var _ contract.Users = (*Store)(nil)

// LookupUsers is the user directory of plugins (contract.Users): the users
// named by refs, each by id or else by name; unknown refs are left out. It
// is the only reader of the users collection outside this package's rules.
func (s *Store) LookupUsers(ctx context.Context, refs []string) ([]contract.UserInfo, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	byID, err := s.Users(ctx, bson.M{"_id": bson.M{"$in": refs}})
	if err != nil {
		return nil, fmt.Errorf("look up users: %w", err)
	}
	found := make(map[string]bool, len(byID))
	for _, u := range byID {
		found[u.ID] = true
	}
	var names []string
	for _, r := range refs {
		if !found[r] {
			names = append(names, r)
		}
	}
	users := byID
	if len(names) > 0 {
		byName, err := s.Users(ctx, bson.M{"name": bson.M{"$in": names}})
		if err != nil {
			return nil, fmt.Errorf("look up users: %w", err)
		}
		users = append(users, byName...)
	}
	out := make([]contract.UserInfo, len(users))
	for i, u := range users {
		out[i] = contract.UserInfo{ID: u.ID, Name: u.Name, Email: u.Email, Fullname: u.Fullname, About: u.About,
			State: u.State, Sysadmin: u.Sysadmin, Created: u.Created}
	}
	return out, nil
}
