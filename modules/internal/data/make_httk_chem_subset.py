"""Build httk_chem_physical_and_invitro_subset.csv.gz from httk's chemical table.

Input: /work/shared/data/httk_chem_physical_and_invitro.csv.gz (httk 2.7.4
chem.physical_and_invitro.data exported with R write.csv; see SOURCES.md).
Keeps every row (so unknown vs. unusable chemicals can be told apart) and only
the columns the pbpk-httk parameterisation and tk-2d read.
Run: python3 make_httk_chem_subset.py [input]
"""
import csv, gzip, sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/httk_chem_physical_and_invitro.csv.gz"
COLS = ["Compound", "CAS", "DTXSID", "MW", "logP", "logMA", "pKa_Donor", "pKa_Accept",
        "Human.Clint", "Human.Clint.pValue", "Human.Funbound.plasma", "Human.Rblood2plasma",
        "Human.Caco2.Pab", "Human.Fabs", "Human.Fgut", "Human.Foral", "Human.Fhep",
        "Rat.Clint", "Rat.Clint.pValue", "Rat.Funbound.plasma", "Rat.Rblood2plasma",
        "Mouse.Funbound.plasma", "Rabbit.Funbound.plasma",
        "Rat.Foral", "Mouse.Foral", "Dog.Foral"]
with gzip.open(SRC, "rt", newline="") as f, \
        gzip.GzipFile("httk_chem_physical_and_invitro_subset.csv.gz", "wb", mtime=0) as g:
    out = csv.writer(__import__("io").TextIOWrapper(g, newline="", encoding="utf-8"), lineterminator="\n")
    r = csv.DictReader(f)
    out.writerow(COLS)
    for row in r:
        out.writerow(["" if row[c] in ("NA",) else row[c] for c in COLS])
