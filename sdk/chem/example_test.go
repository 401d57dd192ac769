package chem_test

import (
	"errors"
	"fmt"

	"toxgate/sdk/chem"
)

func Example() {
	m, err := chem.ParseSMILES("CC(=O)Oc1ccccc1C(=O)O") // aspirin
	if err != nil {
		panic(err)
	}
	d := chem.Describe(m)
	fmt.Printf("%s %.3f logP=%.4f TPSA=%.2f HBD=%d HBA=%d rot=%d\n",
		d.Formula, d.MolWt, d.CLogP, d.TPSA, d.HBD, d.HBA, d.RotatableBonds)

	fp := chem.Morgan(m, 2, 2048)
	salicylic, _ := chem.ParseSMILES("O=C(O)c1ccccc1O")
	fmt.Printf("bits=%d tanimoto(salicylic acid)=%.3f\n", fp.Count(), chem.Tanimoto(fp, chem.Morgan(salicylic, 2, 2048)))

	_, err = chem.ParseSMILES("CC(=O)Oc1ccccc1C(=O")
	var pe *chem.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Pos, pe.Reason)
	}
	// Output:
	// C9H8O4 180.159 logP=1.3101 TPSA=63.60 HBD=1 HBA=3 rot=2
	// bits=24 tanimoto(salicylic acid)=0.448
	// 16 branch opened here is not closed
}
