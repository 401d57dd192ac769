package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// collPeers holds one heartbeat record per running gateway of the store.
const collPeers = "gateway_peers"

const (
	// peerBeat is how often a gateway writes its heartbeat record and
	// reads the others'.
	peerBeat = 5 * time.Second
	// peerLive is how old a peer's last heartbeat may be for the peer to
	// count as running (three missed beats).
	peerLive = 3 * peerBeat
	// peerForget is how old a heartbeat record must be before any gateway
	// deletes it (a gateway killed without a clean stop leaves one).
	peerForget = time.Hour
)

// peerRecord is one gateway's heartbeat record.
type peerRecord struct {
	ID        string    `bson:"_id" json:"id"`
	Addr      string    `bson:"addr" json:"addr"`
	PublicURL string    `bson:"public_url" json:"public_url"`
	Host      string    `bson:"host" json:"host"`
	PID       int       `bson:"pid" json:"pid"`
	Version   string    `bson:"version" json:"version"`
	Started   time.Time `bson:"started" json:"started"`
	At        time.Time `bson:"at" json:"seen"`
}

// peers keeps this gateway's heartbeat record in the store and the list of
// the other gateways whose records are recent: on a shared store
// (PostgreSQL or MongoDB), the gateways of the cluster.
type peers struct {
	coll *mongo.Collection
	self peerRecord
	log  *slog.Logger

	mu     sync.Mutex
	others []peerRecord
	err    error

	stop chan struct{}
	done chan struct{}
}

// startPeers writes this gateway's first heartbeat and keeps beating
// every peerBeat until close.
func startPeers(db *mongo.Database, addr, publicURL, version string, log *slog.Logger) *peers {
	host, _ := os.Hostname()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	p := &peers{coll: db.Collection(collPeers), log: log, stop: make(chan struct{}), done: make(chan struct{}),
		self: peerRecord{ID: hex.EncodeToString(b), Addr: addr, PublicURL: publicURL, Host: host, PID: os.Getpid(),
			Version: version, Started: time.Now().UTC()}}
	go p.run()
	return p
}

func (p *peers) run() {
	defer close(p.done)
	t := time.NewTicker(peerBeat)
	defer t.Stop()
	for {
		p.beat()
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
	}
}

// beat writes this gateway's record, reads the others' and forgets the
// records of gateways gone for peerForget.
func (p *peers) beat() {
	ctx, cancel := context.WithTimeout(context.Background(), peerBeat)
	defer cancel()
	now := time.Now().UTC()
	rec := p.self
	rec.At = now
	_, err := p.coll.ReplaceOne(ctx, bson.M{"_id": rec.ID}, rec, options.Replace().SetUpsert(true))
	var all []peerRecord
	if err == nil {
		var cur *mongo.Cursor
		if cur, err = p.coll.Find(ctx, bson.M{}); err == nil {
			err = cur.All(ctx, &all)
		}
	}
	var others []peerRecord
	for _, r := range all {
		switch {
		case r.ID == p.self.ID:
		case now.Sub(r.At) <= peerLive:
			others = append(others, r)
		case now.Sub(r.At) > peerForget:
			if _, derr := p.coll.DeleteOne(ctx, bson.M{"_id": r.ID}); derr != nil {
				p.log.Debug("peers: forget a gone gateway", "id", r.ID, "err", derr)
			}
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].Addr+others[i].ID < others[j].Addr+others[j].ID })
	p.mu.Lock()
	if err == nil {
		p.others = others
	}
	p.err = err
	p.mu.Unlock()
	if err != nil {
		p.log.Warn("peers: heartbeat failed", "err", err)
	}
}

// list is the other gateways seen at the last beat.
func (p *peers) list() []peerRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(make([]peerRecord, 0, len(p.others)), p.others...)
}

// close stops beating and deletes this gateway's record, so that its
// peers stop listing it at their next beat.
func (p *peers) close(ctx context.Context) error {
	close(p.stop)
	select {
	case <-p.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	_, err := p.coll.DeleteOne(ctx, bson.M{"_id": p.self.ID})
	return err
}

// collector is the peers' gauge for /metrics.
func (p *peers) collector() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toxgate_peers",
		Help: "Other gateways of the same store whose heartbeat is recent (at most 15 s old)."},
		func() float64 { return float64(len(p.list())) })
}
