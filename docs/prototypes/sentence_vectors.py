"""Dense channel with sentence vectors, measured offline (not the service).

The service gives each record one vector: its content followed by its context. This script
replays the dense channel on LoCoMo dev with the same model file, the same turn text and
context as `cargo xtask eval locomo`, the same centring on the searched records' mean and the
same person weighting of the query (0.3 as written, 0.7 without the speakers' names), and
compares ranking by that one vector with ranking by a mix of it and the best of the turn's
sentence vectors. Dense channel alone, recall_frac@10 per category.

Run with the Python that `cargo xtask setup` provisions for the CrewAI adapter (it has numpy,
onnxruntime and tokenizers):

    ~/.cache/retold/venvs/crewai/bin/python docs/prototypes/sentence_vectors.py \
        ../shared/data/locomo-dev.json ~/.cache/retold/models/all-minilm-l6-v2-int8

A third argument chooses what a sentence vector is made from: `speaker` (the default: the
speaker's name, then the sentence; an image's caption is a sentence of its own), `raw` (the
turn's text split as it is, so only its first sentence names the speaker) or `first` (each
later sentence followed by the turn's first sentence).

About 4 minutes on two cores the first time; vectors are cached in
~/.cache/retold/prototype-vectors.json.
"""
import json
import os
import re
import sys

import numpy as np

from minilm import Embedder, unit

DATA, MODEL = sys.argv[1], os.path.expanduser(sys.argv[2])
PARTS = sys.argv[3] if len(sys.argv) > 3 else "speaker"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
embedder = Embedder(MODEL, os.path.expanduser("~/.cache/retold/prototype-vectors.json"))
embed = embedder.embed


def sentences(text):
    return [p for p in re.split(r"(?<=[.!?])\s+", text) if p.strip()]


results = {}
parts_total = turns_total = 0
for conversation in json.load(open(DATA)):
    conv = conversation["conversation"]
    turns = []
    for n in range(1, 100):
        session_turns = conv.get(f"session_{n}")
        if session_turns is None:
            break
        before = None
        for t in session_turns:
            caption = f" [shared an image: {t['blip_caption']}]" if "blip_caption" in t else ""
            content = f"{t['speaker']}: {t['text']}{caption}"
            # As `cargo xtask eval locomo` writes a turn: content, then the turn before.
            whole = content + ("\n" + before[-300:] if before else "")
            if PARTS == "speaker":
                parts = [f"{t['speaker']}: {s}" for s in sentences(t["text"])]
                if caption:
                    parts.append(f"{t['speaker']}:{caption}")
            elif PARTS == "raw":
                parts = sentences(content)
            else:
                first, *later = sentences(content)
                parts = [first] + [f"{s}\n{first}" for s in later]
            turns.append((t["dia_id"], whole, parts))
            before = content
    ids = [t[0] for t in turns]
    whole = embed([t[1] for t in turns])
    owner = np.array([i for i, t in enumerate(turns) for _ in t[2]])
    parts = embed([p for t in turns for p in t[2]])
    parts_total += len(parts)
    turns_total += len(turns)
    speakers = {conv["speaker_a"].lower(), conv["speaker_b"].lower()}
    questions = [q for q in conversation["qa"] if q.get("category") in CATEGORIES]
    asked = embed([q["question"] for q in questions])

    def without_names(question):
        words = question.split()
        kept = [w for w in words if re.sub(r"('s|’s)$", "", w.strip("?,.!")).lower() not in speakers]
        return " ".join(kept) if len(kept) < len(words) else question

    rest = embed([without_names(q["question"]) for q in questions])
    queries = unit(0.3 * asked + 0.7 * rest)
    whole_mean, parts_mean = whole.mean(0), parts.mean(0)
    whole_c, parts_c = unit(whole - whole_mean), unit(parts - parts_mean)
    for qi, q in enumerate(questions):
        evidence = [e for e in q["evidence"] if e in ids]
        if not evidence:
            continue
        by_whole = whole_c @ unit(queries[qi] - whole_mean)
        part_scores = parts_c @ unit(queries[qi] - parts_mean)
        best_part = np.full(len(turns), -9.0, dtype=np.float32)
        np.maximum.at(best_part, owner, part_scores)
        for share in [1.0, 0.7, 0.5, 0.3, 0.0]:
            score = share * by_whole + (1 - share) * best_part
            first = {ids[i] for i in np.argsort(-score)[:10]}
            found = sum(e in first for e in evidence) / len(evidence)
            results.setdefault(share, {}).setdefault(CATEGORIES[q["category"]], []).append(found)

embedder.save()
print(f"{turns_total} turns, {parts_total} sentence vectors")
print("| whole-vector share | @10 all | multi-hop | open-domain | single-hop | temporal |")
print("|---|---|---|---|---|---|")
for share, by in results.items():
    everything = [x for v in by.values() for x in v]
    cells = " | ".join(f"{np.mean(by[c]):.3f}" for c in ["multi-hop", "open-domain", "single-hop", "temporal"])
    print(f"| {share} | {np.mean(everything):.3f} | {cells} |")
