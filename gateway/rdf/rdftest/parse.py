# Parses RDF files with rdflib (Debian's python3-rdflib) and prints their
# triples as JSON; fails when the files do not hold isomorphic graphs.
# usage: parse.py FORMAT=FILE ...   (FORMAT: turtle, xml, json-ld)
import json
import sys

import rdflib
from rdflib.compare import to_isomorphic

graphs = []
for arg in sys.argv[1:]:
    fmt, path = arg.split("=", 1)
    g = rdflib.Graph()
    with open(path, "rb") as f:
        g.parse(data=f.read(), format=fmt)
    graphs.append((fmt, g))

first_fmt, first = graphs[0]
for fmt, g in graphs[1:]:
    if to_isomorphic(first) != to_isomorphic(g):
        a = set(first.serialize(format="nt").splitlines())
        b = set(g.serialize(format="nt").splitlines())
        sys.stderr.write("%s and %s differ:\nonly in %s:\n%s\nonly in %s:\n%s\n" % (
            first_fmt, fmt, first_fmt, "\n".join(sorted(a - b)[:20]), fmt, "\n".join(sorted(b - a)[:20])))
        sys.exit(3)


def term(t):
    if isinstance(t, rdflib.BNode):
        return {"kind": "blank", "value": str(t)}
    if isinstance(t, rdflib.URIRef):
        return {"kind": "iri", "value": str(t)}
    return {"kind": "literal", "value": str(t), "lang": t.language or "",
            "datatype": str(t.datatype) if t.datatype else ""}


json.dump([[term(s), term(p), term(o)] for s, p, o in first], sys.stdout)
