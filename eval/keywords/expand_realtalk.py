#!/usr/bin/env python3
"""Writes REALTALK's keywords file keyed by question text, as the shared scripts read it.

    python3 eval/keywords/expand_realtalk.py --data /work/devset --out /tmp/realtalk_keywords.json

REALTALK grants no redistribution right (eval/README.md), so its questions are not committed:
realtalk_hashed.json keys each list by the first 16 hex digits of the SHA-256 of the question's
text, and this script finds the texts in your converted copy (eval/devset/convert.py).
"""
import argparse
import glob
import hashlib
import json
import os
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="folder of the converted REALTALK *.json")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "realtalk_hashed.json"), encoding="utf-8") as f:
        hashed = json.load(f)
    out = {}
    for path in sorted(glob.glob(os.path.join(a.data, "*.json"))):
        with open(path, encoding="utf-8") as f:
            conv = json.load(f)
        for q in conv.get("qa", []):
            h = hashlib.sha256(q["question"].encode()).hexdigest()[:16]
            if h in hashed:
                out[q["question"]] = hashed[h]
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
    print("%d of %d questions have keywords" % (len(out), len(hashed)), file=sys.stderr)
    return 0 if len(out) == len(hashed) else 1


if __name__ == "__main__":
    sys.exit(main())
