package ml

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
)

// digestPanel are diverse structures whose features fingerprint the feature
// code: salts, charges, aromatic heterocycles, halogens, stereo, macrocycles.
var digestPanel = []string{
	"COc1ccc(CCN2CCC(Nc3nc4ccccc4n3Cc3ccc(F)cc3)CC2)cc1",
	"CC(=O)Oc1ccccc1C(=O)[O-].[Na+]",
	"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C",
	"Clc1cc2Oc3cc(Cl)c(Cl)cc3Oc2cc1Cl",
	"COc1cc2c(cc1OC)C1C(=O)c3ccc4c(c3OC1CO2)CC(O4)C(=C)C",
	"C[NH+](C)CCCN1c2ccccc2CCc2ccccc21",
	"O=[N+]([O-])c1ccc(S(=O)(=O)N)cc1",
	"N[C@@H](Cc1c[nH]c2ccccc12)C(=O)O",
	"FC(F)(F)C(F)(F)C(F)(F)C(F)(F)S(=O)(=O)O",
	"CCN(CC)CCNC(=O)c1c(C)[nH]c(/C=C2\\C(=O)Nc3ccc(F)cc32)c1C",
	"c1ccc2c(c1)cc1ccc3cccc4ccc2c1c34",
	"OCC1OC(O)C(O)C(O)C1O",
	"CCCCc1oc2ccccc2c1C(=O)c1cc(I)c(OCCN(CC)CC)c(I)c1",
	"Brc1ccc(cc1)P(=O)(O)O",
	"C1CCC2(CC1)OCCO2",
	"CN1C(=O)CN=C(c2ccccc2)c2cc(Cl)ccc21",
}

// FeatureDigest hashes the features and AD fingerprints that f computes for a
// fixed panel of structures. A bundle records it at training time; a different
// value at serving time means the feature code (sdk/chem, sdk/ml) changed and
// the weights must be retrained.
func FeatureDigest(f Featurizer) string {
	h := sha256.New()
	var b [8]byte
	for _, s := range digestPanel {
		m, err := Standardize(s)
		if err != nil {
			h.Write([]byte("error:" + err.Error()))
			continue
		}
		x := f.Features(m)
		for k, i := range x.Idx {
			binary.LittleEndian.PutUint32(b[:4], uint32(i))
			binary.LittleEndian.PutUint32(b[4:], math.Float32bits(x.Val[k]))
			h.Write(b[:])
		}
		for _, w := range ADFingerprint(m) {
			binary.LittleEndian.PutUint64(b[:], w)
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
