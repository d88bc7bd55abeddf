#!/usr/bin/env python3
"""Turn- and session-level ranking metrics from the shared harness's per-question details.

    python3 eval/score.py --data DIR --run mnemo=mnemo.details.jsonl --run bm25=bm25.details.jsonl \
        [--k 5,10,20] [--out scores.json] [--per-question pq.jsonl]

Reads the --details JSON lines that ../shared/eval/locomo_recall.py (a server) and
../shared/eval/bm25_reference.py (plain BM25) write, and the same --data folder they read, and
prints the runs side by side, overall and per category.

Turn level: the ranked list is the answer's pages; each page is one stored exchange (one
add_memory pair, i.e. a mnemo turn). A page is relevant when it holds an evidence dialogue id.
  R@K          share of evidence dialogue ids among the first K pages (the harness's Recall@K)
  any@K        1 when at least one relevant page is among the first K
  all@K        1 when every relevant page is among the first K
  nDCG@K       binary gain per relevant page, log2 discount, ideal = min(K, relevant pages)
Session level: the pages' sessions in order of first appearance (so a session ranks where its
best page ranks); a session is relevant when it holds an evidence id. The same four metrics,
over sessions. Session lists come from the answer with the most pages (max_results 20), so
session@10 means the first ten distinct sessions among twenty pages.

For locomo_recall.py details, which keep the dialogue ids of the first K pages flattened
("retrieved": {K: [...]}, one call per K), pages are rebuilt from the pairing the harness uses
(turns 1+2, 3+4, ... of a session): consecutive ids of one pair are one page. Turn-level @K
uses the answer of the call with max_results K when the run made one, else the first K pages of
the largest answer. bm25_reference.py details ("top") already list pages.
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_HARNESS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "eval"))


def load_harness(path):
    sys.path.insert(0, path)
    try:
        import locomo_data  # noqa: F401
    except ImportError:
        raise SystemExit("cannot import locomo_data from %s (give --harness DIR)" % path)
    return sys.modules["locomo_data"]


def pair_index(conv):
    """dialogue id -> (page index, session) for one harness conversation."""
    out = {}
    for i, p in enumerate(conv["pairs"]):
        for d in p["dia_ids"]:
            out[d] = (i, p["session"])
    return out


def session_of(did):
    try:
        return int(did[1:].split(":")[0])
    except (ValueError, IndexError):
        return None


def pages_from_flat(ids, index):
    """Flattened dialogue ids of consecutive pages -> list of pages (each a list of ids)."""
    pages, last = [], None
    for d in ids:
        key = index.get(d, (None, None))[0]
        if key is None:
            key = ("?", d)
        if pages and key == last:
            pages[-1].append(d)
        else:
            pages.append([d])
            last = key
    return pages


def answers_of(row, index):
    """-> {K: pages} for the K values the run asked with, plus 'max' for the largest answer."""
    if "top" in row:
        pages = [list(p[0]) for p in row["top"]]
        return {"max": pages}
    got = {}
    for k, ids in (row.get("retrieved") or {}).items():
        got[int(k)] = pages_from_flat(ids, index)
    if got:
        got["max"] = got[max(k for k in got if k != "max")]
    else:
        got["max"] = []
    return got


def ndcg(flags, n_relevant, k):
    if n_relevant == 0:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, f in enumerate(flags[:k]) if f)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(k, n_relevant)))
    return dcg / idcg


def unit_metrics(units, relevant, ks, ev_count_fn):
    """units: ranked list of hashable unit keys (deduplicated); relevant: set of keys."""
    out = {}
    for k in ks:
        top = units[:k]
        hit = set(top) & relevant
        flags = [u in relevant for u in units]
        out["R@%d" % k] = ev_count_fn(top)
        out["any@%d" % k] = 1.0 if hit else 0.0
        out["all@%d" % k] = 1.0 if relevant and hit == relevant else 0.0
        out["nDCG@%d" % k] = ndcg(flags, len(relevant), k)
    return out


def score_question(row, conv_index, ks):
    evidence = list(dict.fromkeys(row["evidence"]))
    ev = set(evidence)
    answers = answers_of(row, conv_index)
    turn = {}
    for k in ks:
        pages = answers.get(k)
        pages = (pages if pages is not None else answers["max"])[:k]
        keys, seen = [], set()
        for p in pages:
            key = tuple(sorted(p))
            if key not in seen:
                seen.add(key)
                keys.append(key)
        relevant_pages = {conv_index[d][0] for d in ev if d in conv_index}
        page_ids = []
        for key in keys:
            idx = conv_index.get(key[0], (("?", key),))[0]
            page_ids.append(idx)
        found = set(d for p in pages for d in p) & ev
        turn["R@%d" % k] = len(found) / len(ev) if ev else 0.0
        hit = set(page_ids) & relevant_pages
        turn["any@%d" % k] = 1.0 if hit else 0.0
        turn["all@%d" % k] = 1.0 if relevant_pages and hit == relevant_pages else 0.0
        turn["nDCG@%d" % k] = ndcg([p in relevant_pages for p in page_ids], len(relevant_pages), k)
    sessions = []
    for p in answers["max"]:
        for d in p:
            s = session_of(d)
            if s is not None and s not in sessions:
                sessions.append(s)
    rel_sessions = {session_of(d) for d in ev} - {None}
    sess = unit_metrics(sessions, rel_sessions, ks,
                        lambda top: len(set(top) & rel_sessions) / len(rel_sessions) if rel_sessions else 0.0)
    return {"turn": turn, "session": sess}


def metric_names(ks):
    names = []
    for m in ("R", "any", "all", "nDCG"):
        names.extend("%s@%d" % (m, k) for k in ks)
    return names


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def aggregate(scored, ks, category_names):
    """scored: list of (category, {level: {metric: v}}) -> nested dict of means."""
    names = metric_names(ks)
    out = {}
    groups = {"overall": scored}
    for c in sorted({c for c, _ in scored}):
        groups["%s %s" % (c, category_names.get(c, "?"))] = [x for x in scored if x[0] == c]
    for g, rows in groups.items():
        out[g] = {"n": len(rows)}
        for level in ("turn", "session"):
            out[g][level] = {m: round(mean([r[1][level][m] for r in rows]), 4) for m in names} if rows else {}
    return out


def read_run(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="the folder of LoCoMo-format JSON the runs used")
    ap.add_argument("--run", action="append", required=True, metavar="NAME=DETAILS.jsonl",
                    help="a run's per-question details (repeatable; first is the reference column order)")
    ap.add_argument("--k", default="5,10,20")
    ap.add_argument("--harness", default=os.environ.get("EVAL_HARNESS", DEFAULT_HARNESS),
                    help="folder of the shared eval scripts (for locomo_data.py)")
    ap.add_argument("--captions", action="store_true", help="the runs used --captions")
    ap.add_argument("--metrics", default="R@10,any@5,all@10,nDCG@5,nDCG@10",
                    help="metrics shown in the table (all are in --out)")
    ap.add_argument("--out", help="write every metric as JSON here")
    ap.add_argument("--per-question", help="write per-question turn/session metrics of every run here (JSON lines)")
    args = ap.parse_args(argv)

    L = load_harness(args.harness)
    ks = L.parse_ks(args.k)
    convs = {c["id"]: c for c in L.load_all(args.data, captions=args.captions)}
    indexes = {cid: pair_index(c) for cid, c in convs.items()}
    runs = []
    for spec in args.run:
        if "=" not in spec:
            ap.error("--run wants NAME=PATH, got %r" % spec)
        name, path = spec.split("=", 1)
        runs.append((name, read_run(path)))

    results = {}
    per_q = {}
    for name, rows in runs:
        scored = []
        for i, row in enumerate(rows):
            idx = indexes.get(str(row.get("conv")))
            if idx is None:
                raise SystemExit("%s: conversation %r is not in %s" % (name, row.get("conv"), args.data))
            s = score_question(row, idx, ks)
            scored.append((row["category"], s))
            per_q.setdefault((row["conv"], row["question"], i), {})[name] = s
        results[name] = aggregate(scored, ks, L.CATEGORY_NAMES)

    shown = [m for m in args.metrics.split(",") if m]
    names = [n for n, _ in runs]
    groups = list(results[names[0]].keys())
    for level in ("turn", "session"):
        print("%s level" % level)
        hdr = "%-16s %5s" % ("category", "n") + "".join(
            " %s" % ("%-*s" % (9 * len(names), m)) for m in shown)
        print(hdr)
        print("%-22s" % "" + "".join(" " + "".join("%9s" % n[:8] for n in names) for _ in shown))
        for g in groups:
            line = "%-16s %5d" % (g[:16], results[names[0]][g]["n"])
            for m in shown:
                line += " " + "".join("%9.4f" % (results[n].get(g, {}).get(level, {}).get(m) or 0.0)
                                      for n in names)
            print(line)
        print()
    if args.out:
        d = os.path.dirname(os.path.abspath(args.out))
        os.makedirs(d, exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"tool": "score", "data": os.path.abspath(args.data), "ks": ks,
                       "runs": dict(s.split("=", 1) for s in args.run),
                       "results": results}, f, indent=2)
            f.write("\n")
    if args.per_question:
        with open(args.per_question, "w", encoding="utf-8") as f:
            for (conv, q, _), by_run in per_q.items():
                f.write(json.dumps({"conv": conv, "question": q, "runs": by_run}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
