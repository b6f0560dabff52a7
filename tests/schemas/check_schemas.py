#!/usr/bin/env python3
"""check_schemas.py FABSIM ROOT: the JSON Schemas in schemas/ against the stock files and the loaders.

1. Every schema is a valid draft 2020-12 schema.
2. Every stock input file names its schema with "$schema" (a path relative to the file) and
   validates against it.
3. The schema never accepts what the loader refuses: each stock file is mutated (keys added and
   removed, values of another type, out of range or with unknown units), and every mutation the
   schema accepts must pass `fabsim check` too, unless the loader refused a cross-reference
   (SEMANTIC: a name that must exist elsewhere, disjoint groups, reachability), which no schema
   can state. The other way round is allowed: a schema may be stricter than the loader.
"""
import copy
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:  # pyenv's python3 may lack Debian's python3-jsonschema, which /usr/bin/python3 has
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("check_schemas.py: needs the jsonschema module (Debian: python3-jsonschema; scripts/install-deps installs it)")

MUTATIONS_PER_FILE = int(os.environ.get("FABSIM_SCHEMA_MUTATIONS", "80"))
STOCK = ["topologies/*.json", "configs/scenarios/*.json", "configs/sweeps/*.json", "configs/traces/*.json",
         "configs/regress/*.json", "configs/hardware/catalogue.json", "configs/measurements/*.json", "configs/calibration/*.json"]


def stock_files(root):
    files = []
    for pattern in STOCK:
        files += sorted(glob.glob(os.path.join(root, pattern)))
    return files


def validator(schema_path):
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def nodes(doc, path=()):
    """Every (path, value) of the document, the root first."""
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from nodes(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from nodes(v, path + (i,))


# Loader refusals that are cross-references or whole-file facts, which no JSON Schema can state:
# names that must exist elsewhere in the file or the catalogue, disjoint groups, reachability.
SEMANTIC = ("depends on", "unknown communicator", "already in group", "already runs program", "runs no program",
            "names itself", "missing device", "cannot reach", "unknown gpu model", "unknown switch model",
            "unknown link model", "unknown nic model", "is used twice", "duplicate device name",
            "unmatched send", "unmatched recv", "but rank", "cannot finish",
            # a device's links against its model's port count in the catalogue
            "ports but its links use", "PCIe ports) cannot take",
            # the magnitude of a quantity with a unit (16 TiB, 1e6 s, 1 B/s to 1e15 B/s): a pattern checks its form
            "is too large", "is too long", "the number is out of range")


def replacements(value):
    """Structural changes of a value: another type, out of range, an unknown unit.

    Not other names (another string that is still a string): whether a name exists is a
    cross-reference, the loader's alone."""
    if isinstance(value, bool):
        return ["yes", 1]
    if isinstance(value, (int, float)):
        return ["7", -1, 1.5, 1e30]
    if isinstance(value, str):
        looks_like_quantity = any(c.isdigit() for c in value) and " " in value
        return [7, None] + (["12 parsecs", "-1 GB/s", "1e999 B"] if looks_like_quantity else [])
    if value is None:
        return [1]
    return ["oops", None]


def mutations(doc, rng):
    """Candidate mutations as (description, mutated document)."""
    candidates = []
    for path, value in nodes(doc):
        if isinstance(value, dict):
            candidates.append((path, "add", "x_unknown_key"))
            for k in value:
                if k != "$schema":
                    candidates.append((path, "remove", k))
        if path and path[-1] != "$schema":
            for r in replacements(value):
                candidates.append((path, "replace", r))
    rng.shuffle(candidates)
    for path, op, arg in candidates[:MUTATIONS_PER_FILE]:
        mutated = copy.deepcopy(doc)
        target = mutated
        for p in path[:-1] if op == "replace" else path:
            target = target[p]
        if op == "add":
            target[arg] = 1
        elif op == "remove":
            del target[arg]
        else:
            target[path[-1]] = arg
        yield f"{op} {'/' + '/'.join(map(str, path))} {json.dumps(arg)}", mutated


def main():
    fabsim, root = sys.argv[1], sys.argv[2]
    failures = []
    for schema in sorted(glob.glob(os.path.join(root, "schemas", "*.schema.json"))):
        validator(schema)
    work = tempfile.mkdtemp(prefix="fabsim-schemas-")
    try:
        # A copy of the data, so that mutated files sit where their relative references resolve.
        for folder in ("configs", "topologies", "schemas"):
            shutil.copytree(os.path.join(root, folder), os.path.join(work, folder),
                            ignore=shutil.ignore_patterns("*.cpp", "*.hpp", "*.txt"))
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        counts = {"both refuse": 0, "both accept": 0, "only the schema refuses": 0,
                  "only the loader refuses (a cross-reference)": 0, "only the loader refuses": 0}
        for path in stock_files(root):
            rel = os.path.relpath(path, root)
            with open(path) as f:
                doc = json.load(f)
            if "$schema" not in doc:
                failures.append(f"{rel}: no \"$schema\"")
                continue
            schema_path = os.path.normpath(os.path.join(os.path.dirname(path), doc["$schema"]))
            if not os.path.exists(schema_path):
                failures.append(f"{rel}: \"$schema\" names {doc['$schema']}, which does not exist")
                continue
            check = validator(schema_path)
            errors = sorted(check.iter_errors(doc), key=lambda e: list(e.absolute_path))
            for e in errors[:3]:
                failures.append(f"{rel}: /{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}")
            if errors:
                continue
            mutated_path = os.path.join(work, os.path.dirname(rel), "mutated-" + os.path.basename(rel))
            for what, mutated in mutations(doc, random.Random(rel)):
                with open(mutated_path, "w") as f:
                    json.dump(mutated, f)
                schema_ok = check.is_valid(mutated)
                r = subprocess.run([fabsim, "check", mutated_path], capture_output=True, text=True, env=env)
                if r.returncode not in (0, 2):
                    failures.append(f"{rel}: {what}: fabsim check exited {r.returncode} (a crash?): {r.stderr.strip()[:300]}")
                    continue
                loader_ok = r.returncode == 0
                if schema_ok and not loader_ok and any(m in r.stderr for m in SEMANTIC):
                    counts["only the loader refuses (a cross-reference)"] += 1
                    continue
                if schema_ok and not loader_ok:
                    failures.append(f"{rel}: {what}: the schema accepts it, the loader refuses: {r.stderr.strip()[:300]}")
                key = ("both accept" if loader_ok else "only the loader refuses") if schema_ok else \
                      ("only the schema refuses" if loader_ok else "both refuse")
                counts[key] += 1
            os.remove(mutated_path)
        print(f"{len(stock_files(root))} stock files validate against their schemas; mutations: " +
              ", ".join(f"{v} {k}" for k, v in counts.items()))
    finally:
        shutil.rmtree(work)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
