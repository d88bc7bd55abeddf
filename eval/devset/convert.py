#!/usr/bin/env python3
"""Turn REALTALK conversations into LoCoMo-format JSON for the shared recall harness.

    python3 eval/devset/convert.py --src REALTALK/data --out /work/devset

REALTALK (Lee et al., 2025) is ten real 21-day messaging-app chats between two people, each
with memory-probing questions whose evidence names the turns that answer them. Its
processed files (data/Chat_<n>_<A>_<B>.json; the data/locomo/ folder beside them is LoCoMo
and is never read) already look like LoCoMo with a few differences that this script irons
out, so that ../shared/eval/locomo_recall.py and bm25_reference.py run unchanged with
--data OUT:

  * turn text is in "clean_text"; it becomes "text" (an image caption stays "blip_caption",
    used only with the harness's --captions);
  * session times are "DD.MM.YYYY, HH:MM:SS"; they become LoCoMo's "H:MM am on D Month, YYYY";
  * speaker names are given a capital first letter ("elise" -> "Elise");
  * evidence lists hold ranges ("D12:3-D12:5"), several ids in one string ("D5:12;D5:16",
    "D13:4. D14:4"), trailing dots and a missing D ("23:29"); they become one canonical "D<s>:<t>" per turn. Ids of
    turns that are not in the processed conversation (mostly photo-only messages that were
    dropped) are left out and counted; a question left with no evidence is dropped and
    counted.
Categories are kept: 1 multi-hop, 2 temporal, 3 commonsense (scored under LoCoMo's names;
the harness calls 3 "open-domain").

Output files are named rt<n>.json after the chat number. A summary is printed (and written
with --report, which must not be inside OUT: the harness reads every *.json there).
"""

import argparse
import datetime
import glob
import hashlib
import json
import os
import re
import sys

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")

_CHAT_RE = re.compile(r"^Chat_(\d+)_.*\.json$")
_SESSION_RE = re.compile(r"^session_(\d+)$")
_ID_RE = re.compile(r"(?<![\d:])D?\s*(\d+)\s*[:;]\s*(\d+)")
_RANGE_RE = re.compile(r"D\s*(\d+)\s*:\s*(\d+)\s*-\s*(?:D\s*(\d+)\s*:\s*)?(\d+)")


def locomo_datetime(raw):
    """'29.12.2023, 22:42:04' -> '10:42 pm on 29 December, 2023'; None if it does not parse."""
    try:
        dt = datetime.datetime.strptime((raw or "").strip(), "%d.%m.%Y, %H:%M:%S")
    except ValueError:
        return None
    hour = dt.hour % 12 or 12
    half = "pm" if dt.hour >= 12 else "am"
    return "%d:%02d %s on %d %s, %d" % (hour, dt.minute, half, dt.day, MONTHS[dt.month - 1], dt.year)


def speaker_name(raw):
    s = (raw or "").strip()
    return s[:1].upper() + s[1:]


def evidence_ids(raw):
    """All 'D<s>:<t>' ids an evidence entry names, ranges expanded, in order, no duplicates.

    A range across sessions ('D13:45-D14:2') cannot be expanded without the session lengths
    and yields its two ends only.
    """
    items = raw if isinstance(raw, list) else [raw]
    out = []

    def add(s, t):
        did = "D%d:%d" % (int(s), int(t))
        if did not in out:
            out.append(did)

    for item in items:
        if not isinstance(item, str):
            continue
        rest = item
        for m in _RANGE_RE.finditer(item):
            s1, t1, s2, t2 = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
            if s2 is None or int(s2) == int(s1):
                for t in range(t1, max(t1, t2) + 1):
                    add(s1, t)
            else:
                add(s1, t1)
                add(s2, t2)
            rest = rest.replace(m.group(0), " ")
        for s, t in _ID_RE.findall(rest):
            add(s, t)
    return out


def convert_chat(chat):
    """One REALTALK chat (parsed JSON) -> (LoCoMo-format dict, stats dict)."""
    names = chat.get("name") or {}
    sessions = sorted(int(m.group(1)) for k in chat
                      if (m := _SESSION_RE.match(k)) and isinstance(chat[k], list) and chat[k])
    conv = {
        "speaker_a": speaker_name(names.get("speaker_1")),
        "speaker_b": speaker_name(names.get("speaker_2")),
    }
    known = set()
    turns = 0
    bad_dates = 0
    for n in sessions:
        raw_dt = chat.get("session_%d_date_time" % n)
        if not raw_dt and chat["session_%d" % n]:
            raw_dt = chat["session_%d" % n][0].get("date_time")
        when = locomo_datetime(raw_dt)
        if when is None:
            bad_dates += 1
            when = raw_dt or ""
        out = []
        for t in chat["session_%d" % n]:
            ids = evidence_ids(t.get("dia_id"))
            if not ids:
                continue
            turn = {"speaker": speaker_name(t.get("speaker")), "dia_id": ids[0],
                    "text": (t.get("clean_text") or t.get("text") or "").strip()}
            if t.get("blip_caption"):
                turn["blip_caption"] = t["blip_caption"]
            out.append(turn)
            known.add(ids[0])
        conv["session_%d_date_time" % n] = when
        conv["session_%d" % n] = out
        turns += len(out)
    qa = []
    ids_dropped = 0
    q_dropped = 0
    for q in chat.get("qa") or []:
        ev = evidence_ids(q.get("evidence"))
        good = [e for e in ev if e in known]
        ids_dropped += len(ev) - len(good)
        if not good:
            q_dropped += 1
            continue
        qa.append({"question": q.get("question", ""), "answer": q.get("answer"),
                   "evidence": good, "category": q.get("category")})
    conv["qa"] = qa
    stats = {"sessions": len(sessions), "turns": turns, "questions": len(qa),
             "questions_dropped_no_evidence": q_dropped, "evidence_ids_dropped": ids_dropped,
             "sessions_with_unparsed_date": bad_dates,
             "categories": {str(c): sum(1 for q in qa if q["category"] == c)
                            for c in sorted({q["category"] for q in qa}, key=str)}}
    return conv, stats


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="REALTALK's data/ folder (holds Chat_<n>_*.json)")
    ap.add_argument("--out", required=True, help="folder to write rt<n>.json into (created)")
    ap.add_argument("--chats", default="", help="comma list of chat numbers to convert (default all)")
    ap.add_argument("--report", help="write the summary as JSON here (not inside --out)")
    args = ap.parse_args(argv)

    out_dir = os.path.abspath(args.out)
    if args.report and os.path.dirname(os.path.abspath(args.report)) == out_dir:
        ap.error("--report must not be inside --out: the harness reads every *.json there")
    wanted = {int(x) for x in args.chats.split(",") if x.strip()}
    files = []
    for p in glob.glob(os.path.join(args.src, "*.json")):
        m = _CHAT_RE.match(os.path.basename(p))
        if m and (not wanted or int(m.group(1)) in wanted):
            files.append((int(m.group(1)), p))
    if not files:
        print("no Chat_<n>_*.json in %s" % args.src, file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    report = {"source": os.path.abspath(args.src), "out": out_dir, "chats": {}}
    total = {"turns": 0, "questions": 0, "questions_dropped_no_evidence": 0, "evidence_ids_dropped": 0}
    for num, path in sorted(files):
        with open(path, "rb") as f:
            raw = f.read()
        conv, stats = convert_chat(json.loads(raw.decode("utf-8")))
        stats["file"] = os.path.basename(path)
        stats["sha256"] = hashlib.sha256(raw).hexdigest()
        name = "rt%d.json" % num
        tmp = os.path.join(out_dir, name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(conv, f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, os.path.join(out_dir, name))
        report["chats"][name] = stats
        for k in total:
            total[k] += stats[k]
        print("%-10s %-32s sessions=%2d turns=%4d questions=%3d (dropped %d) evidence ids dropped=%d"
              % (name, stats["file"], stats["sessions"], stats["turns"], stats["questions"],
                 stats["questions_dropped_no_evidence"], stats["evidence_ids_dropped"]))
    report["total"] = total
    print("total: %(turns)d turns, %(questions)d questions (%(questions_dropped_no_evidence)d dropped "
          "for want of evidence), %(evidence_ids_dropped)d evidence ids not in the conversation" % total)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
