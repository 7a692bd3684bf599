#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Validates iostrata's JSON outputs against a JSON Schema (docs/*.schema.json), strictly.

    validate_json.py SCHEMA [--lines] NAME FILE [NAME FILE ...]

Prints one line per document: `ok - NAME` or `not ok - NAME: PATH: MESSAGE` (the JSON path of
the most relevant error and the validator's message, cut to one line). FILE holds one JSON
document, or with --lines one per line (`dump --json` and `top --json` print JSON lines; each
line is reported as NAME[i]); a FILE ending in .gz is inflated first. Exit 0 when every document
is valid, 1 otherwise.

Stricter than json.loads, because the outputs promise more than "it parses":
  - the bytes must be UTF-8 (a path with invalid bytes must come out as U+FFFD, not raw);
  - NaN, Infinity and duplicate keys are errors (Python accepts them silently);
  - "integer" means an integer literal: a count written as 5.0 fails.
It validates with Draft 7 (Debian 12's python3-jsonschema 4.10 supports it fully). It checks no
figures: the tests do that with jq.
"""
import gzip
import json
import sys

import jsonschema


class Invalid(Exception):
    pass


def no_constant(name):
    raise Invalid(f"{name} is not JSON")


def no_duplicates(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise Invalid(f"duplicate key {json.dumps(k)}")
        seen[k] = v
    return seen


def parse(text):
    return json.loads(text, parse_constant=no_constant, object_pairs_hook=no_duplicates)


def strict_validator(schema):
    def is_int(_checker, v):
        return isinstance(v, int) and not isinstance(v, bool)

    checker = jsonschema.Draft7Validator.TYPE_CHECKER.redefine("integer", is_int)
    cls = jsonschema.validators.extend(jsonschema.Draft7Validator, type_checker=checker)
    return cls(schema)


def where(err):
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)


def one_line(s, limit=300):
    s = " ".join(s.split())
    return s if len(s) <= limit else s[:limit] + "..."


def check(validator, name, text):
    try:
        doc = parse(text)
    except (Invalid, ValueError) as e:
        return f"not ok - {name}: not strict JSON: {one_line(str(e))}"
    err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if err is None:
        return f"ok - {name}"
    return f"not ok - {name}: {where(err)}: {one_line(err.message)}"


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    return data.decode("utf-8")  # strict: invalid bytes raise


def main(argv):
    args = argv[1:]
    lines = "--lines" in args
    args = [a for a in args if a != "--lines"]
    if len(args) < 3 or len(args) % 2 == 0:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    schema_path, pairs = args[0], args[1:]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.Draft7Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        print(f"not ok - {schema_path} is a valid Draft 7 schema: {where(e)}: {one_line(e.message)}")
        return 1
    validator = strict_validator(schema)
    bad = 0
    for name, path in zip(pairs[::2], pairs[1::2]):
        try:
            text = read(path)
        except (OSError, UnicodeDecodeError) as e:
            print(f"not ok - {name}: {path}: {one_line(str(e))}")
            bad += 1
            continue
        docs = [(f"{name}[{i}]", t) for i, t in enumerate(text.splitlines())] if lines else [(name, text)]
        if not docs:
            print(f"not ok - {name}: {path} holds no document")
            bad += 1
        for n, t in docs:
            line = check(validator, n, t)
            print(line)
            bad += line.startswith("not ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
