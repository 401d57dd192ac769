package chem

import (
	"testing"

	"toxgate/internal/cputime"
)

func benchSMILES(b *testing.B) []string {
	rows := loadReference(b)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.smiles
	}
	return out
}

// BenchmarkFullPipeline parses each reference SMILES, computes all
// descriptors and the radius-2 2048-bit Morgan fingerprint; reports mol/s.
func BenchmarkFullPipeline(b *testing.B) {
	smiles := benchSMILES(b)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	n := 0
	for i := 0; i < b.N; i++ {
		s := smiles[i%len(smiles)]
		m, err := ParseSMILES(s)
		if err != nil {
			b.Fatal(err)
		}
		_ = Describe(m)
		_ = Morgan(m, 2, 2048)
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "mol/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		// throughput per CPU-second (includes GC work); robust to other load
		b.ReportMetric(float64(n)/cpu, "mol/cpu-s")
	}
}

// BenchmarkParse measures the SMILES reader with sanitisation only.
func BenchmarkParse(b *testing.B) {
	smiles := benchSMILES(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ParseSMILES(smiles[i%len(smiles)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "mol/s")
}

// BenchmarkDescribe measures descriptors on pre-parsed molecules.
func BenchmarkDescribe(b *testing.B) {
	mols := parseAll(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = Describe(mols[i%len(mols)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "mol/s")
}

// BenchmarkMorgan measures radius-2 2048-bit fingerprints on pre-parsed
// molecules.
func BenchmarkMorgan(b *testing.B) {
	mols := parseAll(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = Morgan(mols[i%len(mols)], 2, 2048)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "mol/s")
}

func parseAll(b *testing.B) []*Mol {
	var mols []*Mol
	for _, s := range benchSMILES(b) {
		m, err := ParseSMILES(s)
		if err != nil {
			b.Fatal(err)
		}
		mols = append(mols, m)
	}
	return mols
}

// BenchmarkSubstructure decodes each of the 3000 reference molecules from
// the compact form and matches a benzene ring against it.
func BenchmarkSubstructure(b *testing.B) {
	rows := loadReference(b)
	var blobs [][]byte
	for _, r := range rows {
		m, err := ParseSMILES(r.smiles)
		if err != nil {
			b.Fatal(err)
		}
		blobs = append(blobs, NewTarget(m).AppendBinary(nil))
	}
	q, err := ParseSMARTS("c1ccccc1")
	if err != nil {
		b.Fatal(err)
	}
	mt := NewMatcher(1 << 60)
	var tg Target
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, bl := range blobs {
			if err := tg.UnmarshalBinary(bl); err != nil {
				b.Fatal(err)
			}
			if _, err := mt.Match(q, &tg); err != nil {
				b.Fatal(err)
			}
		}
	}
}
