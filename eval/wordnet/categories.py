#!/usr/bin/env python3
"""Derive recall's category table from WordNet 3.0 (Debian's wordnet-base).

For each everyday category noun that questions use ("What desserts…",
"Which drinks…") and the hand-written table lacks, the chosen WordNet senses' hyponyms (and instance
hyponyms where asked) are walked down to a depth; their single-word
lemmas whose most used sense is that hyponym (so "head" is not a pet),
or instances of a country or city, become the category's members, the
most used first (cntlist.rev's sense counts), then the nearest, at most
--max per category. Output: one line per
category, the category noun first, then its members, written to --out.

    python3 eval/wordnet/categories.py --wordnet /usr/share/wordnet \
        --out memory/recall/categories_wordnet.txt

Standard library only. WordNet 3.0 Copyright 2006 by Princeton University
(licence in the output's header and in eval/README.md).
"""
import argparse
import os
import sys

# category noun → list of (WordNet noun synset offset, depth, instances).
# Offsets are WordNet 3.0's; each names the sense a question means. Only
# categories that recall's hand-written table (memory/recall/categories.go)
# lacks: generated members for the categories it has (activity, hobby,
# sport, food, pet, country, …) were measured against it and lost on LoCoMo
# (eval/README.md), WordNet's hyponyms of "activity" holding words such as
# "show", "fun" and "demonstration".
SPECS = {
    'interest': [('00426928', 3, False), ('00431552', 2, False)],  # diversion, pastime
    'dish': [('07557434', 2, False)],
    'dessert': [('07609840', 2, False)],
    'drink': [('07881800', 3, False)],
    'beverage': [('07881800', 3, False)],
    'novel': [('06367879', 2, False)],
    'film': [('06613686', 2, False)],
    'genre': [('07071942', 3, False), ('03434943', 2, False), ('07092158', 2, False)],
    'gift': [('13265011', 2, False)],
    'cuisine': [('07571324', 2, False)],
}


def read_counts(wn):
    """sense key → tag count, from cntlist.rev."""
    counts = {}
    path = os.path.join(wn, 'cntlist.rev')
    with open(path, encoding='utf-8') as f:
        for line in f:
            key, _, cnt = line.split()
            counts[key] = int(cnt)
    return counts


class Nouns:
    def __init__(self, wn):
        with open(os.path.join(wn, 'data.noun'), 'rb') as f:
            self.data = f.read()

    def synset(self, off):
        i = int(off)
        line = self.data[i:self.data.index(b'\n', i)].decode('utf-8')
        head = line.split(' | ', 1)[0].split()
        lexfile = int(head[1])
        wc = int(head[3], 16)
        words = [(head[4 + 2 * k], int(head[5 + 2 * k], 16)) for k in range(wc)]
        pi = 4 + 2 * wc
        pc = int(head[pi])
        ptrs = [(head[pi + 1 + 4 * k], head[pi + 2 + 4 * k], head[pi + 3 + 4 * k]) for k in range(pc)]
        return lexfile, words, ptrs


def first_senses(wn):
    """lemma → offset of its most used noun sense, from index.noun."""
    first = {}
    with open(os.path.join(wn, 'index.noun'), encoding='utf-8') as f:
        for line in f:
            if line.startswith(' '):
                continue
            p = line.split()
            pc = int(p[3])
            first[p[0]] = p[4 + pc + 2]
    return first


def members(nouns, counts, first, specs):
    score = {}
    for off, depth, instances in specs:
        frontier = [(off, 0)]
        seen = {off}
        while frontier:
            cur, d = frontier.pop()
            lexfile, words, ptrs = nouns.synset(cur)
            if d > 0:
                for w, lexid in words:
                    if '_' in w or '-' in w or not w.isalpha():
                        continue
                    inst = instances and w[0].isupper()
                    if w[0].isupper() and not inst:
                        continue
                    if not inst and first.get(w.lower()) != cur:
                        continue  # not the word's usual sense
                    key = '%s%%1:%02d:%02d::' % (w.lower(), lexfile, lexid)
                    c = counts.get(key, 0) + (1 if inst else 0)
                    # most used first, then nearest the category
                    rank = (c, -d)
                    score[w.lower()] = max(score.get(w.lower(), (0, -99)), rank)
            if d == depth:
                continue
            for sym, o, pos in ptrs:
                if pos == 'n' and (sym == '~' or (instances and sym == '~i')) and o not in seen:
                    seen.add(o)
                    frontier.append((o, d + 1))
    return score


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--wordnet', default='/usr/share/wordnet')
    ap.add_argument('--out', required=True)
    ap.add_argument('--max', type=int, default=50)
    a = ap.parse_args(argv)
    counts = read_counts(a.wordnet)
    nouns = Nouns(a.wordnet)
    first = first_senses(a.wordnet)
    lines = []
    for cat, specs in SPECS.items():
        sc = members(nouns, counts, first, specs)
        sc.pop(cat, None)
        best = sorted(sc, key=lambda w: (-sc[w][0], -sc[w][1], w))[:a.max]
        if best:
            lines.append(' '.join([cat] + best))
    header = [
        '# Category noun, then member words: derived from WordNet 3.0 by',
        '# eval/wordnet/categories.py (do not edit by hand).',
        '# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.',
        '# THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO',
        '# REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. (Licence: eval/README.md.)',
    ]
    with open(a.out, 'w', encoding='utf-8') as f:
        f.write('\n'.join(header + lines) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
