"""The sentence-vector prototype (sentence_vectors.py) on a sample of LongMemEval_S dev.

Dense channel alone, offline, user and assistant turns each written with the end of the turn
before; a turn's sentences (at most its first 16) get vectors of their own. Prints, per
question, whether all answer sessions are among the first five distinct sessions and whether
every evidence turn is among the first ten, for each share of the turn's own vector.

    ~/.cache/retold/venvs/crewai/bin/python docs/prototypes/sentence_vectors_lme.py \
        ../shared/data/longmemeval-s-dev.json.gz ~/.cache/retold/models/all-minilm-l6-v2-int8 0 5

The last two arguments pick questions `start::7`, the first `count` of them (0 5, 1 5, 2 5
and 3 5 were run: twenty questions). Each question embeds its whole haystack, about 2.5 minutes.
"""
import gzip
import json
import os
import re
import sys

import numpy as np

from minilm import Embedder, unit

DATA, MODEL = sys.argv[1], os.path.expanduser(sys.argv[2])
START, COUNT = int(sys.argv[3]), int(sys.argv[4])
embed = Embedder(MODEL).embed


def sentences(text):
    return [p for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]


questions = [q for q in json.load(gzip.open(DATA)) if not q["question_id"].endswith("_abs")]
for q in questions[START::7][:COUNT]:
    turns = []
    for sid, turns_of in zip(q["haystack_session_ids"], q["haystack_sessions"]):
        before = None
        for t in turns_of:
            whole = t["content"] + ("\n" + before[-300:] if before else "")
            turns.append((sid, t.get("has_answer", False), whole, sentences(t["content"])[:16]))
            before = t["content"]
    whole = embed([t[2] for t in turns])
    owner = np.array([i for i, t in enumerate(turns) for _ in t[3]])
    parts = embed([p for t in turns for p in t[3]])
    query = embed([q["question"]])[0]
    by_whole = unit(whole - whole.mean(0)) @ unit(query - whole.mean(0))
    best_part = np.full(len(turns), -9.0, dtype=np.float32)
    np.maximum.at(best_part, owner, unit(parts - parts.mean(0)) @ unit(query - parts.mean(0)))
    row = {"id": q["question_id"], "type": q["question_type"]}
    evidence = [i for i, t in enumerate(turns) if t[1]]
    for share in [1.0, 0.7, 0.5, 0.3]:
        order = np.argsort(-(share * by_whole + (1 - share) * best_part))
        first_sessions = []
        for i in order:
            if turns[i][0] not in first_sessions:
                first_sessions.append(turns[i][0])
            if len(first_sessions) == 5:
                break
        all5 = all(a in first_sessions for a in q["answer_session_ids"])
        first_ten = set(order[:10].tolist())
        row[share] = {"session_all@5": all5, "turn_all@10": all(i in first_ten for i in evidence)}
    print(json.dumps(row), flush=True)
