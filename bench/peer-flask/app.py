"""Benchmark peer: the hERG model as the original platform served it.

A Flask application with RDKit and scikit-learn: a random forest of 200 trees
on Morgan radius-2 2048-bit fingerprints, trained at start from the same
hERG training data as the toxgate module `herg`
(modules/internal/data/herg_karim.csv), served by gunicorn. It answers
POST /hERG/evaluate with {"smiles": "..."} (one structure per call) with the
prediction, the probability and the applicability domain the original
platform reported, and GET /IsAlive. See README.md for how toxgate-bench runs it.

Environment:
  PEER_DATA   the training CSV (smiles,Y); default: the repository's copy
  PEER_CACHE  a directory of the caller's own where the fitted forest is
              kept between runs (a pickle, so never a shared directory),
              keyed by the data's SHA-256 and the library versions; unset
              or empty: fitted at every start (toxgate-bench uses bin/bench-peer)
"""

import hashlib
import os
import pickle
import sys

import numpy as np
import sklearn
from flask import Flask, jsonify, request
from rdkit import Chem, DataStructs, RDLogger, rdBase
from rdkit.Chem import rdFingerprintGenerator
from sklearn.ensemble import RandomForestClassifier

RDLogger.DisableLog("rdApp.*")

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get(
    "PEER_DATA",
    os.path.join(HERE, "..", "..", "modules", "internal", "data", "herg_karim.csv"),
)
CACHE = os.environ.get("PEER_CACHE", "")

TREES = 200
MAX_SMILES = 2000  # characters; longer input is refused

# Morgan radius 2, 2048 bits: the model's features. Morgan radius 3, 1024
# bits: the applicability domain (Dice similarity to the training set).
FEATURES = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
AD_FP = rdFingerprintGenerator.GetMorganGenerator(radius=3, fpSize=1024)
AD_SIMILARITY, AD_NEIGHBOURS = 0.3, 3


def read_data(path):
    """Returns the parsed molecules and their labels (unparsable rows dropped)."""
    mols, labels = [], []
    with open(path, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
        i_smiles, i_y = header.index("smiles"), header.index("Y")
        for line in f:
            cols = line.rstrip("\n").split(",")
            mol = Chem.MolFromSmiles(cols[i_smiles])
            if mol is not None:
                mols.append(mol)
                labels.append(int(float(cols[i_y])))
    return mols, np.array(labels)


def features(mol):
    """The model's input: the Morgan r2 2048-bit fingerprint as a 0/1 row."""
    arr = np.zeros((2048,), dtype=np.uint8)
    DataStructs.ConvertToNumpyArray(FEATURES.GetFingerprint(mol), arr)
    return arr


def fit(mols, labels):
    x = np.stack([features(m) for m in mols])
    forest = RandomForestClassifier(n_estimators=TREES, n_jobs=-1, random_state=20240501)
    forest.fit(x, labels)
    forest.n_jobs = 1  # one call is one request: gunicorn's workers are the parallelism
    return forest


def load_forest(mols, labels):
    """Fits the forest, or reads the one fitted on the same data and versions."""
    if not CACHE:
        return fit(mols, labels)
    with open(DATA, "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()[:16]
    key += "-sk" + sklearn.__version__ + "-rdkit" + rdBase.rdkitVersion + f"-t{TREES}"
    path = os.path.join(CACHE, f"forest-{key}.pickle")
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError):
        pass
    forest = fit(mols, labels)
    os.makedirs(CACHE, exist_ok=True)
    tmp = path + f".{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(forest, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
    return forest


print(f"peer: reading {DATA} (then fitting {TREES} trees, or reading them from PEER_CACHE)", file=sys.stderr, flush=True)
_mols, _labels = read_data(DATA)
FOREST = load_forest(_mols, _labels)
TRAIN_AD = [AD_FP.GetFingerprint(m) for m in _mols]
del _mols
print(f"peer: ready ({len(TRAIN_AD)} training structures)", file=sys.stderr, flush=True)

app = Flask(__name__)


@app.get("/IsAlive")
def is_alive():
    return jsonify(alive=True)


@app.post("/hERG/evaluate")
def evaluate():
    body = request.get_json(silent=True)
    smiles = body.get("smiles") if isinstance(body, dict) else None
    if not isinstance(smiles, str) or not smiles or len(smiles) > MAX_SMILES:
        return jsonify(error="send {\"smiles\": \"<one SMILES>\"}"), 400
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return jsonify(error="invalid SMILES"), 422
    p = float(FOREST.predict_proba(features(mol).reshape(1, -1))[0][1])
    sims = DataStructs.BulkDiceSimilarity(AD_FP.GetFingerprint(mol), TRAIN_AD)
    near = sorted(sims, reverse=True)[:AD_NEIGHBOURS]
    in_ad = sum(1 for s in sims if s > AD_SIMILARITY) >= AD_NEIGHBOURS
    return jsonify(
        smiles=smiles,
        prediction=int(p >= 0.5),
        label="blocker" if p >= 0.5 else "non-blocker",
        probability=p,
        applicability_domain="in AD" if in_ad else "out AD",
        nearest_similarities=near,
    )
