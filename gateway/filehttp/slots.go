package filehttp

import "sync"

// userSlots counts the uploads each user has in progress on this gateway
// and refuses one past the cap.
type userSlots struct {
	max  int
	mu   sync.Mutex
	busy map[string]int
}

func newUserSlots(max int) *userSlots {
	return &userSlots{max: max, busy: map[string]int{}}
}

// acquire takes one of key's slots; false when key has max uploads in
// progress already. A cap of 0 or less takes no slot and never refuses.
func (s *userSlots) acquire(key string) bool {
	if s.max <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[key] >= s.max {
		return false
	}
	s.busy[key]++
	return true
}

// release gives back a slot acquire took.
func (s *userSlots) release(key string) {
	if s.max <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[key] <= 1 {
		delete(s.busy, key)
		return
	}
	s.busy[key]--
}
