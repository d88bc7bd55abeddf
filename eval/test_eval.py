"""Tests of the evaluation helpers (stdlib unittest): python3 -m unittest discover -s eval -p 'test_*.py'."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "devset"))
import convert  # noqa: E402
import score  # noqa: E402


class EvidenceIDs(unittest.TestCase):
    def test_forms_found_in_realtalk(self):
        cases = [
            ("D5:3.", ["D5:3"]),
            ("D5:12;D5:16", ["D5:12", "D5:16"]),
            ("D12:3-D12:5", ["D12:3", "D12:4", "D12:5"]),
            ("D3:5-7", ["D3:5", "D3:6", "D3:7"]),
            ("D13:45-D14:2", ["D13:45", "D14:2"]),
            ("D13:4. D14:4", ["D13:4", "D14:4"]),
            ("D13:45:D20:19", ["D13:45", "D20:19"]),
            ("D17;39", ["D17:39"]),
            ("D 2:18", ["D2:18"]),
            ("23:29", ["D23:29"]),
            ("D:56", []),
            ("D58", []),
            ("", []),
            (["D1:2", "D1:2", "D1:3"], ["D1:2", "D1:3"]),
        ]
        for raw, want in cases:
            with self.subTest(raw=raw):
                self.assertEqual(convert.evidence_ids(raw), want)


class SessionTime(unittest.TestCase):
    def test_locomo_form(self):
        cases = [
            ("29.12.2023, 22:42:04", "10:42 pm on 29 December, 2023"),
            ("06.01.2024, 00:05:00", "12:05 am on 6 January, 2024"),
            ("06.01.2024, 12:30:59", "12:30 pm on 6 January, 2024"),
            ("2024-01-06 12:30", None),
            ("", None),
        ]
        for raw, want in cases:
            with self.subTest(raw=raw):
                self.assertEqual(convert.locomo_datetime(raw), want)


def chat():
    def turn(did, who, text, **kw):
        return dict({"clean_text": text, "speaker": who, "date_time": "01.01.2024, 10:00:00",
                     "img_file": [], "img_url": [], "dia_id": did}, **kw)
    return {
        "name": {"speaker_1": "Ada", "speaker_2": "bo"},
        "session_1": [turn("D1:1", "Ada", "I moved to Lisbon"), turn("D1:2", "bo", "Nice!"),
                      turn("D1:4", "Ada", "Look", blip_caption="a tram")],
        "session_1_date_time": "01.01.2024, 10:00:00",
        "events_session_1": {"agent_a": [], "agent_b": []},
        "session_2": [turn("D2:1", "bo", "I got a cat")],
        "session_2_date_time": "03.01.2024, 21:15:00",
        "qa": [
            {"question": "Where did Ada move?", "answer": "Lisbon", "evidence": ["D1:1-D1:3"], "category": 1},
            {"question": "Photo?", "answer": "?", "evidence": ["D1:3"], "category": 3},
            {"question": "Pets?", "answer": "cat", "evidence": ["D2:1; D9:9"], "category": 2},
        ],
    }


class ConvertChat(unittest.TestCase):
    def test_locomo_shape(self):
        conv, stats = convert.convert_chat(chat())
        self.assertEqual((conv["speaker_a"], conv["speaker_b"]), ("Ada", "Bo"))
        self.assertEqual(conv["session_2_date_time"], "9:15 pm on 3 January, 2024")
        self.assertEqual([t["text"] for t in conv["session_1"]], ["I moved to Lisbon", "Nice!", "Look"])
        self.assertEqual(conv["session_1"][2]["blip_caption"], "a tram")
        self.assertNotIn("events_session_1", conv)
        # D1:3 is not in the chat: dropped from the range; the question naming only it is dropped.
        self.assertEqual([q["evidence"] for q in conv["qa"]], [["D1:1", "D1:2"], ["D2:1"]])
        self.assertEqual(stats["questions_dropped_no_evidence"], 1)
        self.assertEqual(stats["evidence_ids_dropped"], 3)

    def test_main_writes_files_the_harness_reads(self):
        with tempfile.TemporaryDirectory() as d:
            src, out = os.path.join(d, "src"), os.path.join(d, "out")
            os.makedirs(src)
            with open(os.path.join(src, "Chat_7_Ada_Bo.json"), "w") as f:
                json.dump(chat(), f)
            with open(os.path.join(src, "notes.json"), "w") as f:
                f.write("{}")
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                self.assertEqual(convert.main(["--src", src, "--out", out]), 0)
            self.assertIn("rt7.json", printed.getvalue())
            self.assertEqual(sorted(os.listdir(out)), ["rt7.json"])
            with open(os.path.join(out, "rt7.json")) as f:
                self.assertEqual(len(json.load(f)["qa"]), 2)


class Score(unittest.TestCase):
    # Two sessions; pairs: (D1:1,D1:2)=0, (D1:3,D1:4)=1, (D2:1,D2:2)=2, (D2:3)=3.
    index = {"D1:1": (0, 1), "D1:2": (0, 1), "D1:3": (1, 1), "D1:4": (1, 1),
             "D2:1": (2, 2), "D2:2": (2, 2), "D2:3": (3, 2)}

    def test_pages_from_flat(self):
        got = score.pages_from_flat(["D2:1", "D2:2", "D1:3", "D1:4", "D2:3"], self.index)
        self.assertEqual(got, [["D2:1", "D2:2"], ["D1:3", "D1:4"], ["D2:3"]])

    def test_ndcg(self):
        self.assertAlmostEqual(score.ndcg([True, False], 1, 5), 1.0)
        self.assertAlmostEqual(score.ndcg([False, True], 1, 5), 1 / 1.584962500721156)
        self.assertAlmostEqual(score.ndcg([False, True], 2, 5), (1 / 1.584962500721156) / (1 + 1 / 1.584962500721156))
        self.assertEqual(score.ndcg([], 0, 5), 0.0)

    def test_harness_and_bm25_rows_agree(self):
        ks = [1, 2]
        harness = {"conv": "x", "category": 1, "evidence": ["D1:3", "D2:3"],
                   "retrieved": {"1": ["D2:1", "D2:2"], "2": ["D2:1", "D2:2", "D1:3", "D1:4"]}}
        bm25 = {"conv": "x", "category": 1, "evidence": ["D1:3", "D2:3"],
                "top": [[["D2:1", "D2:2"], 3.0], [["D1:3", "D1:4"], 2.0]]}
        for row in (harness, bm25):
            s = score.score_question(row, self.index, ks)
            self.assertEqual(s["turn"]["R@1"], 0.0)
            self.assertEqual(s["turn"]["R@2"], 0.5)
            self.assertEqual(s["turn"]["any@2"], 1.0)
            self.assertEqual(s["turn"]["all@2"], 0.0)
            self.assertAlmostEqual(s["turn"]["nDCG@2"], (1 / 1.584962500721156) / (1 + 1 / 1.584962500721156))
            # sessions in order: 2, 1 — both relevant.
            self.assertEqual(s["session"]["all@2"], 1.0)
            self.assertEqual(s["session"]["nDCG@1"], 1.0)
            self.assertEqual(s["session"]["R@1"], 0.5)


if __name__ == "__main__":
    unittest.main()
