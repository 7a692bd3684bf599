#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks of the web API's answers (tests/integration/web_api.sh).

    api_check.py part API_FILE REPORT_FILE KEY [SUBKEY]
        the API's member KEY equals the report's member KEY (or report[KEY][SUBKEY]) exactly
    api_check.py series SERIES_FILE REPORT_FILE LAYER...
        the series' points summed per layer equal the report's layers.LAYER totals
    api_check.py openapi OPENAPI PATH_TEMPLATE STATUS FILE
        FILE validates against the schema of that response in the OpenAPI 3.1 document
        (its components/schemas resolved, JSON Schema 2020-12: python3-jsonschema)

Prints one line, `ok - ...` or `not ok - ...`; exit 0 or 1.
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def result(ok, name, why=""):
    print(("ok - " if ok else "not ok - ") + name + ("" if ok else ": " + why))
    return 0 if ok else 1


def part(api, report, key, sub=None):
    a, r = load(api), load(report)
    want = r.get(key) if sub is None else r.get(key, {}).get(sub)
    got = a.get(sub if sub else key)
    name = "api %s%s equals the report's" % (key, "." + sub if sub else "")
    return result(got == want and want is not None, name, "got %.200s, want %.200s" % (got, want))


def series(path, report, layers):
    s, r = load(path), load(report)
    bad = 0
    for layer in layers:
        sums = {k: 0 for k in ("bytes_read", "bytes_written", "reads", "writes", "meta_ops")}
        for p in s["points"]:
            if p["layer"] == layer:
                for k in sums:
                    sums[k] += p[k]
        want = {k: r["layers"][layer][k] for k in sums}
        bad |= result(sums == want and want["reads"] + want["writes"] > 0,
                      "series (by %s, %d ms) of %s add up to the report" % (s["by"], s["resolution_ms"], layer),
                      "got %s, want %s" % (sums, want))
    return bad


def openapi(doc, template, status, path):
    import jsonschema
    api = load(doc)
    op = api["paths"][template]["get"]
    schema = op["responses"][status]["content"]["application/json"]["schema"]
    full = {"$schema": "https://json-schema.org/draft/2020-12/schema", "components": api["components"]}
    full.update(schema)
    v = jsonschema.Draft202012Validator(full)
    errs = sorted(v.iter_errors(load(path)), key=lambda e: e.path)
    name = "openapi: %s %s validates" % (template, status)
    if errs:
        e = errs[0]
        return result(False, name, "/".join(str(x) for x in e.absolute_path) + ": " + e.message[:200])
    return result(True, name)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "part":
        sys.exit(part(*sys.argv[2:]))
    if cmd == "series":
        sys.exit(series(sys.argv[2], sys.argv[3], sys.argv[4:]))
    if cmd == "openapi":
        sys.exit(openapi(*sys.argv[2:6]))
    sys.exit(2)
