#!/usr/bin/env python3
"""Writes small valid seeds for the fuzz targets whose real inputs are large
(the hardware catalogue, the published measurements): each a copy of the file
with one entry per section, or one data set, so that libFuzzer mutates whole,
valid documents of a few kilobytes rather than a 64 KiB prefix of one.

usage: split_seeds.py catalogue|measurements INPUT OUTPUT_DIR
"""
import json
import os
import sys


def main():
    kind, source, out = sys.argv[1:4]
    with open(source) as f:
        doc = json.load(f)
    seeds = []
    if kind == "catalogue":
        sections = [k for k, v in doc.items() if isinstance(v, dict)]
        width = max(len(doc[s]) for s in sections)
        for i in range(width):
            seed = {k: v for k, v in doc.items() if not isinstance(v, dict)}
            for s in sections:
                names = sorted(doc[s])
                seed[s] = {names[i % len(names)]: doc[s][names[i % len(names)]]}
            seeds.append(seed)
    else:
        for key in ("collective_datasets", "point_to_point_datasets"):
            for entry in doc.get(key, []):
                seed = {k: v for k, v in doc.items() if not isinstance(v, list)}
                seed[key] = [entry]
                seeds.append(seed)
    os.makedirs(out, exist_ok=True)
    for i, seed in enumerate(seeds):
        with open(os.path.join(out, f"{kind}-part{i}.json"), "w") as f:
            json.dump(seed, f, indent=1)


if __name__ == "__main__":
    main()
