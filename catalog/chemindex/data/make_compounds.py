"""Build the compound tables the resolver embeds.

compounds_invitrodb.csv.gz: DTXSID, PREFERRED_NAME, CASRN, canonical_smiles of
  /work/shared/data/mitotox_invitrodb_v4_3_modeling_table.csv (every row).
synonyms_httk.csv.gz: DTXSID, CAS, Compound, All.Compound.Names of
  /work/shared/data/httk_chem_physical_and_invitro.csv.gz (every row).
Values are copied unchanged. Run: python3 make_compounds.py [shared-data-dir]
"""
import csv, gzip, io, sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data"

def write(name, header, rows):
    with gzip.GzipFile(name, "wb", mtime=0) as g:
        out = csv.writer(io.TextIOWrapper(g, newline="", encoding="utf-8"), lineterminator="\n")
        out.writerow(header)
        for r in rows:
            out.writerow(r)

with open(SRC + "/mitotox_invitrodb_v4_3_modeling_table.csv", newline="") as f:
    cols = ["DTXSID", "PREFERRED_NAME", "CASRN", "canonical_smiles"]
    write("compounds_invitrodb.csv.gz", cols, ([r[c] for c in cols] for r in csv.DictReader(f)))

with gzip.open(SRC + "/httk_chem_physical_and_invitro.csv.gz", "rt", newline="") as f:
    cols = ["DTXSID", "CAS", "Compound", "All.Compound.Names"]
    write("synonyms_httk.csv.gz", cols,
          (["" if r[c] == "NA" else r[c] for c in cols] for r in csv.DictReader(f)))
