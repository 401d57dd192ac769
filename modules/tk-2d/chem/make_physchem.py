"""Build httk_physchem_supplement.csv.gz: the columns of httk 2.7.4's
chem.physical_and_invitro.data that armitage_eval reads and that the shared
httk subset shared with pbpk-httk (modules/internal/data) lacks: logHenry, logWSol, MP, keyed
by CAS. Input: httk_chem_physical_and_invitro.csv.gz (httk 2.7.4 table exported
with R write.csv). Run: python3 make_physchem.py [input]
"""
import csv, gzip, io, sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/httk_chem_physical_and_invitro.csv.gz"
COLS = ["CAS", "logHenry", "logWSol", "MP"]
with gzip.open(SRC, "rt", newline="") as f, \
        gzip.GzipFile("httk_physchem_supplement.csv.gz", "wb", mtime=0) as g:
    out = csv.writer(io.TextIOWrapper(g, newline="", encoding="utf-8"), lineterminator="\n")
    out.writerow(COLS)
    for row in csv.DictReader(f):
        vals = ["" if row[c] == "NA" else row[c] for c in COLS]
        if any(vals[1:]):
            out.writerow(vals)
