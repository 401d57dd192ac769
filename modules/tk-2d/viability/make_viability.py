"""Build matthews2023_drc48h.csv: the 48-h viability rows of Matthews et al.
(2023) data/DRC48hoursdata.csv (mward-lab/Matthews_TOP2i_cardiotox_2023 @
ca905296, MIT) for the four anthracycline-type drugs, columns unchanged in
value: Drug, SampleID, Conc (µM), Percent (fraction of vehicle).
Run: python3 make_viability.py [input]
"""
import csv, sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/tktd/matthews2023_ipsc_cm/DRC48hoursdata.csv"
with open(SRC, newline="") as f, open("matthews2023_drc48h.csv", "w", newline="") as g:
    out = csv.writer(g, lineterminator="\n")
    out.writerow(["Drug", "SampleID", "Conc", "Percent"])
    for r in csv.DictReader(f):
        if r["Drug"] in ("Daun", "Doxo", "Epi", "Mito"):
            out.writerow([r["Drug"], r["SampleID"], r["Conc"], r["Percent"]])
