package catalog

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"

	"toxgate/catalog/ckan"
)

// GenerateOptions say what Generate makes.
type GenerateOptions struct {
	// Datasets is how many datasets the catalog should hold under the
	// generator's names ("gen-0000001", ...); those already there are kept.
	Datasets int
	// Organizations is how many organizations the datasets are spread
	// over; 0 means one per 500 datasets, at least 3.
	Organizations int
	// Seed makes the catalog reproducible: the same seed gives the same
	// datasets.
	Seed int64
	// Progress, when set, is called after each dataset with the number
	// handled so far (from one goroutine at a time).
	Progress func(done int)
	// Writers is how many datasets are written at once (0: DefaultGenerateWriters);
	// concurrent writes share store round trips (group commit).
	Writers int
}

// DefaultGenerateWriters is how many datasets Generate writes at once
// unless told otherwise: enough for group commit to write them in batches.
const DefaultGenerateWriters = 32

// GenerateStats counts what Generate wrote.
type GenerateStats struct {
	// Organizations and Datasets created; Private of them private;
	// Existing datasets already there and left alone.
	Organizations, Datasets, Private, Existing int
}

// MaxGenerateDatasets bounds one Generate call.
const MaxGenerateDatasets = 10_000_000

// Generate fills the catalog with realistic datasets, for trying it at
// scale: organizations, three tags each from a vocabulary with a long
// tail (a few tags on many datasets, most on few), two extras, two link
// resources, a 40-word description, one in ten private. Each record is
// validated as package_create validates it and written through the write
// path (activities, claims, the change marker), as a sysadmin, so other
// processes on the store see them as any other write.
func (s *Service) Generate(ctx context.Context, o GenerateOptions) (GenerateStats, error) {
	var st GenerateStats
	if o.Datasets < 0 || o.Datasets > MaxGenerateDatasets {
		return st, fmt.Errorf("generate: datasets must be between 0 and %d", MaxGenerateDatasets)
	}
	if o.Organizations <= 0 {
		o.Organizations = max(3, o.Datasets/500)
	}
	if err := s.Sync(ctx); err != nil {
		return st, err
	}
	sys := Caller{Name: "generator", Sysadmin: true}
	ctx = withActor(ctx, sys, "")
	rng := rand.New(rand.NewSource(o.Seed))
	orgs := make([]string, o.Organizations)
	for i := range orgs {
		name := fmt.Sprintf("gen-org-%03d", i+1)
		orgs[i] = name
		if s.st.lookupGroupOf(orgKind, name) != nil {
			continue
		}
		org := &Organization{ID: newID(), Name: name, Title: "Generated laboratory " + fmt.Sprint(i+1),
			Description: "An organization made by toxgate catalog generate.", State: StateActive, Created: now(), Rev: 1}
		if err := s.insertOrg(ctx, org); err != nil {
			return st, fmt.Errorf("generate: organization %s: %w", name, err)
		}
		st.Organizations++
	}
	tags := rand.NewZipf(rng, 1.2, 1, uint64(len(genTags)-1))
	writers := o.Writers
	if writers <= 0 {
		writers = DefaultGenerateWriters
	}
	// The datasets are drawn in order from the seeded generator here, and
	// validated and written by the writers, whose concurrent inserts the
	// store's group commit batches.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan map[string]any, writers)
	var (
		mu       sync.Mutex
		firstErr error
		handled  int
		wg       sync.WaitGroup
	)
	done := func(private, created bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = err
				cancel()
			}
			return
		}
		if created {
			st.Datasets++
			if private {
				st.Private++
			}
		} else {
			st.Existing++
		}
		handled++
		if o.Progress != nil {
			o.Progress(handled)
		}
	}
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for data := range work {
				if ctx.Err() != nil {
					continue
				}
				at := now()
				in, verr := viewed2(s.st, func() (datasetInput, *ckan.Error) {
					return s.st.buildDataset(sys, data, nil, at, true)
				})
				if verr != nil {
					done(false, false, fmt.Errorf("generate: dataset %s: %w", data["name"], verr))
					continue
				}
				if err := s.insertDataset(ctx, in.d); err != nil {
					done(false, false, fmt.Errorf("generate: dataset %s: %w", data["name"], err))
					continue
				}
				done(in.d.Private, true, nil)
			}
		}()
	}
	for i := 1; i <= o.Datasets && ctx.Err() == nil; i++ {
		data := genDataset(rng, tags, i, orgs)
		if s.st.datasetNamed(data["name"].(string)) != nil {
			done(false, false, nil)
			continue
		}
		select {
		case work <- data:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return st, firstErr
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("generate: %w", err)
	}
	return st, nil
}

// genDataset is the package_create data dict of generated dataset i.
func genDataset(rng *rand.Rand, tags *rand.Zipf, i int, orgs []string) map[string]any {
	name := fmt.Sprintf("gen-%07d", i)
	pick := func(l []string) string { return l[rng.Intn(len(l))] }
	words := make([]string, 40)
	for j := range words {
		words[j] = pick(genWords)
	}
	seen := map[string]bool{}
	var tagList []any
	for len(tagList) < 3 {
		t := genTags[tags.Uint64()]
		if !seen[t] {
			seen[t] = true
			tagList = append(tagList, map[string]any{"name": t})
		}
	}
	topic := pick(genWords)
	resources := []any{
		map[string]any{"name": "Results table", "url": "https://data.example.org/" + name + "/results.csv", "format": "CSV",
			"description": "Measured " + topic + " values, one row per sample."},
		map[string]any{"name": "Protocol", "url": "https://data.example.org/" + name + "/protocol.pdf", "format": "PDF"},
	}
	return map[string]any{
		"name":      name,
		"title":     fmt.Sprintf("%s %s study %d", strings.ToUpper(topic[:1])+topic[1:], pick(genWords), i),
		"notes":     strings.Join(words, " "),
		"owner_org": orgs[rng.Intn(len(orgs))],
		"private":   rng.Intn(10) == 0,
		"tags":      tagList,
		"extras": []any{
			map[string]any{"key": "species", "value": pick(genSpecies)},
			map[string]any{"key": "endpoint", "value": pick(genEndpoints)},
		},
		"license_id": pick([]string{"cc-by", "cc-zero", "odc-by", "other-open"}),
		"resources":  resources,
	}
}

var (
	genWords = strings.Fields(`hepatotoxicity cardiotoxicity nephrotoxicity neurotoxicity genotoxicity herg ahr pbpk
		doxorubicin bisphenol acetaminophen valproate amiodarone assay rat mouse human zebrafish in-vitro in-vivo
		kinetics lipidomics proteomics transcriptomics metabolomics dose response exposure clearance plasma liver
		kidney heart brain cell line hepatocyte cardiomyocyte organoid biomarker pathway adverse outcome
		concentration time course benchmark toxicity screening high-throughput`)
	genSpecies   = []string{"human", "rat", "mouse", "zebrafish", "dog", "rabbit", "cynomolgus monkey", "in vitro"}
	genEndpoints = []string{"EC50", "IC50", "NOAEL", "LOAEL", "BMD", "AUC", "Cmax", "LD50", "clearance", "viability"}
	// genTags is the tag vocabulary: the first few are common, the rest a
	// long tail (drawn with a Zipf distribution).
	genTags = func() []string {
		out := strings.Fields(`toxicology hepatotoxicity in-vitro in-vivo cardiotoxicity omics pbpk herg dose-response
			adverse-outcome-pathway nephrotoxicity neurotoxicity genotoxicity kinetics biomarkers`)
		for i := len(out); i < 2000; i++ {
			out = append(out, fmt.Sprintf("topic-%04d", i))
		}
		return out
	}()
)
