package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/plugins/contract"
)

// slot is one of a user's places for a job not yet over, in the store's
// jobs.slots collection, so that every gateway of the store counts the same
// jobs. Its _id is "<user>/<n>" with n below Config.MaxPerUser: taking a
// place is an insert, atomic between gateways like every other decision of
// the jobs (see RATIONALE.md).
type slot struct {
	ID    string    `bson:"_id"`
	Job   string    `bson:"job"`
	Since time.Time `bson:"since"`
}

// slotStagingGrace is how long a place may stay with a job that has no
// document yet (its input is being staged) before it is taken back; a
// job's staging ends within HandleCreate's 10 minutes.
const slotStagingGrace = 30 * time.Minute

func (s db) slots() *mongo.Collection { return s.d.Collection("jobs.slots") }

// userKey identifies c's places.
func userKey(c contract.Identity) string {
	if c.UserID != "" {
		return c.UserID
	}
	return "name:" + c.Name
}

// takeSlot gives job one of c's Config.MaxPerUser places, taking back the
// places of c's jobs that are over (a gateway that died between ending a
// job and freeing its place); 429 when c has that many jobs queued or
// running.
func (s *Service) takeSlot(ctx context.Context, c contract.Identity, job string) (string, error) {
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
	key := userKey(c)
	for pass := 0; pass < 2; pass++ {
		for n := range s.cfg.MaxPerUser {
			id := fmt.Sprintf("%s/%d", key, n)
			ok, err := insert(ctx, s.db.slots(), slot{ID: id, Job: job, Since: time.Now().UTC()})
			if err != nil {
				return "", errorf(http.StatusServiceUnavailable, "unavailable", "", "counting your jobs: %v", err)
			}
			if ok {
				return id, nil
			}
		}
		if pass == 0 {
			freed, err := s.reclaimSlots(ctx, key)
			if err != nil {
				return "", errorf(http.StatusServiceUnavailable, "unavailable", "", "counting your jobs: %v", err)
			}
			if freed == 0 {
				break
			}
		}
	}
	return "", errorf(http.StatusTooManyRequests, "too_many_requests", "",
		"you have %d jobs queued or running, the most one user may have at once (jobs.max_per_user); retry when one has finished, or cancel one (DELETE /jobs/{id})", s.cfg.MaxPerUser)
}

// reclaimSlots frees the places of user key whose job is over, or whose
// job never got a document (its creation failed) within slotStagingGrace.
func (s *Service) reclaimSlots(ctx context.Context, key string) (int, error) {
	freed := 0
	for n := range s.cfg.MaxPerUser {
		id := fmt.Sprintf("%s/%d", key, n)
		var sl slot
		err := s.db.slots().FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&sl)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return freed, fmt.Errorf("jobs: reading slot %s: %w", id, err)
		}
		j, err := s.db.job(ctx, sl.Job)
		if err != nil {
			return freed, err
		}
		if j == nil && time.Since(sl.Since) < slotStagingGrace || j != nil && !Terminal(j.State) {
			continue
		}
		if _, err := s.db.slots().DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "job", Value: sl.Job}}); err != nil {
			return freed, fmt.Errorf("jobs: freeing slot %s: %w", id, err)
		}
		freed++
	}
	return freed, nil
}

// releaseSlot frees the place of job j (nothing when it has none).
func (s *Service) releaseSlot(ctx context.Context, j *Job) {
	if j.Slot == "" {
		return
	}
	if _, err := s.db.slots().DeleteOne(ctx, bson.D{{Key: "_id", Value: j.Slot}, {Key: "job", Value: j.ID}}); err != nil {
		s.log.Warn("freeing a job's place; the user's next job takes it back", "job", j.ID, "slot", j.Slot, "err", err)
	}
}
