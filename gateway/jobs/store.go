// Package jobs runs scoring jobs: a model applied to every row of a catalog
// resource's table (CSV or TSV), in the background, into a new CSV resource
// beside it that records where every value came from. Jobs and their
// progress live in the shared MongoDB store: any gateway on the store works
// on any job's chunks of rows under leases that expire, so a job outlives
// the gateway that took it and scales with the number of gateways.
//
// Layout in the store (see RATIONALE.md for why):
//
//	jobs                 one document per job (its request, provenance, final state)
//	jobs.<id>.leases     small documents: a lease per chunk attempt ("c000012/1"),
//	                     "cancel", and the finishing lease ("final/0")
//	jobs.<id>.rows       the staged input rows ("in/000012") and the model's
//	                     answers ("out/000012") of each chunk
//	jobs.slots           each user's places for jobs not yet over ("<user>/<n>",
//	                     n < jobs.max_per_user), freed when a job ends
//
// Every cross-gateway decision is an insert of a document with a chosen _id
// (unique, hence atomic on every store); every other write has one writer.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Job states.
const (
	StateQueued    = "queued"
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
)

// Terminal reports whether a job in state s is over.
func Terminal(s string) bool {
	return s == StateSucceeded || s == StateFailed || s == StateCancelled
}

// Job is the stored document of a job. Fields set at creation never change;
// State, Error, ResultResourceID, Done, Failed and Finished are written once,
// by the holder of the job's finishing lease.
type Job struct {
	ID       string `bson:"_id"`
	UserID   string `bson:"user_id"`
	User     string `bson:"user"`
	Sysadmin bool   `bson:"sysadmin"`

	Model        string `bson:"model"`
	Version      string `bson:"version"`
	ModuleSHA256 string `bson:"module_sha256"`
	Route        string `bson:"route"`

	ResourceID    string `bson:"resource_id"`
	PackageID     string `bson:"package_id"`
	InputFileID   string `bson:"input_file_id"`
	InputFilename string `bson:"input_filename"`
	InputSHA256   string `bson:"input_sha256"`
	// InputVersion and InputVersionName are the dataset version scored.
	InputVersion     string `bson:"input_version,omitempty"`
	InputVersionName string `bson:"input_version_name,omitempty"`
	// RerunOf is the job a rerun repeats; Differences its changes once
	// computed.
	RerunOf     string       `bson:"rerun_of,omitempty"`
	Differences *Differences `bson:"differences,omitempty"`
	Column      string       `bson:"column,omitempty"`
	Columns     []string     `bson:"columns"`

	Total     int `bson:"total"`
	Chunks    int `bson:"chunks"`
	ChunkRows int `bson:"chunk_rows"`

	State            string    `bson:"state"`
	Error            string    `bson:"error,omitempty"`
	ResultResourceID string    `bson:"result_resource_id,omitempty"`
	Done             int       `bson:"done"`
	Failed           int       `bson:"failed"`
	Created          time.Time `bson:"created"`
	Finished         time.Time `bson:"finished,omitempty"`
	// Slot is the job's place among its user's jobs not yet over (the _id
	// of its jobs.slots document), freed when it ends.
	Slot string `bson:"slot,omitempty"`
}

// lease is one attempt at a chunk (or at finishing the job). Only its owner
// writes it after the insert.
type lease struct {
	ID     string    `bson:"_id"`
	Owner  string    `bson:"owner"`
	Since  time.Time `bson:"since"`
	Until  time.Time `bson:"until"`
	Done   bool      `bson:"done"`
	Rows   int       `bson:"rows"`
	Failed int       `bson:"failed"`
	// Kind is the outcome a finishing lease writes (succeeded, failed, cancelled).
	Kind   string `bson:"kind,omitempty"`
	Reason string `bson:"reason,omitempty"`
}

// inRows is a chunk of staged input rows, each a JSON array of its cells
// (the embedded store keeps no nested arrays).
type inRows struct {
	ID   string   `bson:"_id"`
	Rows []string `bson:"rows"`
}

// cells decodes the staged rows.
func (in *inRows) cells() ([][]string, error) {
	out := make([][]string, len(in.Rows))
	for i, r := range in.Rows {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			return nil, fmt.Errorf("staged row %d: %w", i, err)
		}
	}
	return out, nil
}

// outRows holds a chunk's answers: one JSON object per input row, in order
// ({"error": "..."} for a row the model refused).
type outRows struct {
	ID    string   `bson:"_id"`
	Items []string `bson:"items"`
}

// db is the jobs' part of the store.
type db struct{ d *mongo.Database }

func (s db) jobs() *mongo.Collection { return s.d.Collection("jobs") }
func (s db) leases(id string) *mongo.Collection {
	return s.d.Collection("jobs." + id + ".leases")
}
func (s db) rows(id string) *mongo.Collection { return s.d.Collection("jobs." + id + ".rows") }

func chunkLeaseID(chunk, epoch int) string { return fmt.Sprintf("c%06d/%d", chunk, epoch) }
func finalLeaseID(epoch int) string        { return fmt.Sprintf("final/%d", epoch) }
func inID(chunk int) string                { return fmt.Sprintf("in/%06d", chunk) }
func outID(chunk int) string               { return fmt.Sprintf("out/%06d", chunk) }

const cancelID = "cancel"

func (s db) job(ctx context.Context, id string) (*Job, error) {
	var j Job
	err := s.jobs().FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&j)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: reading job %s: %w", id, err)
	}
	return &j, nil
}

func (s db) lease(ctx context.Context, job, id string) (*lease, error) {
	var l lease
	err := s.leases(job).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&l)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: reading lease %s of %s: %w", id, job, err)
	}
	return &l, nil
}

// insert inserts doc and reports false if its _id exists already.
func insert(ctx context.Context, c *mongo.Collection, doc any) (bool, error) {
	_, err := c.InsertOne(ctx, doc)
	if mongo.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("jobs: insert into %s: %w", c.Name(), err)
	}
	return true, nil
}

func (s db) set(ctx context.Context, c *mongo.Collection, id string, fields bson.D) error {
	_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: fields}})
	if err != nil {
		return fmt.Errorf("jobs: update %s in %s: %w", id, c.Name(), err)
	}
	return nil
}

// allLeases reads the small documents of a job's leases collection.
func (s db) allLeases(ctx context.Context, job string) ([]lease, error) {
	cur, err := s.leases(job).Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("jobs: leases of %s: %w", job, err)
	}
	var out []lease
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("jobs: leases of %s: %w", job, err)
	}
	return out, nil
}

// active lists the jobs not yet over.
func (s db) active(ctx context.Context) ([]Job, error) {
	cur, err := s.jobs().Find(ctx, bson.D{{Key: "state", Value: StateQueued}})
	if err != nil {
		return nil, fmt.Errorf("jobs: listing active jobs: %w", err)
	}
	var out []Job
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("jobs: listing active jobs: %w", err)
	}
	return out, nil
}

// byUser lists a user's jobs, newest first (all jobs for userID "").
func (s db) byUser(ctx context.Context, userID string, limit int) ([]Job, error) {
	filter := bson.D{}
	if userID != "" {
		filter = bson.D{{Key: "user_id", Value: userID}}
	}
	cur, err := s.jobs().Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "created", Value: -1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fmt.Errorf("jobs: listing jobs: %w", err)
	}
	var out []Job
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("jobs: listing jobs: %w", err)
	}
	return out, nil
}
