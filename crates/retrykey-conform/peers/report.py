"""The peers' report, in Markdown, from run.sh's records and the kit's JSON reports.

    python3 report.py FACTS.tsv LIBRARIES.tsv > REPORT.md

FACTS.tsv: one `name<TAB>value` a line (the date, then the Python and Node versions).
LIBRARIES.tsv: one `name<TAB>language<TAB>version<TAB>outcome<TAB>detail<TAB>served-by` a line,
where outcome is `judged` (detail: the kit's `--json` output) or `skipped` (detail: why), and
served-by names the framework packages the library's server runs on, with their versions.
Failures are printed as the kit's own text prints them (`report.rs`, `failure_text`).
"""

import json
import sys


def read_tsv(path, fields):
    rows = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.rstrip("\n")
            if line:
                parts = line.split("\t", fields - 1)
                rows.append(parts + [""] * (fields - len(parts)))
    return rows


def cell(text):
    return str(text).replace("|", "\\|")


def failure_text(name, failure):
    """A failed check as the kit's text report prints it."""
    lines = [f"{name} failed:"]
    lines += [f"  {breach}" for breach in failure.get("breaches", [])]
    size, first = failure.get("size"), failure.get("first_size")
    if size is not None and first is not None and size < first:
        run = f"a run of size {size}, shrunk from {first}"
    elif size is not None:
        run = f"a run of size {size}"
    else:
        run = "the run"
    witness = failure.get("witness", [])
    named = failure.get("named", len(witness))
    cut = f" (the first {len(witness)} of {named} named)" if named > len(witness) else ""
    lines.append(f"  witness: {len(witness)} of the {failure.get('exchanges', 0)} exchanges of {run}{cut}")
    for line in witness:
        lines.append(f"  {line['number']:>3} > {line['sent']}")
        lines.append(f"      < {line['got']}")
    return lines


def main(facts_path, libraries_path):
    facts = read_tsv(facts_path, 2)
    libraries = read_tsv(libraries_path, 6)
    generated = next((value for name, value in facts if name == "generated"), "?")
    out = ["# Idempotency-Key libraries under the conformance kit", ""]
    out.append(f"Generated: {generated}")
    out.append("")
    out.append("## Versions")
    out.append("")
    for name, value in facts:
        if name != "generated":
            out.append(f"- {name} {value}")
    for name, language, version, outcome, _, served_by in libraries:
        if served_by:
            out.append(f"- {name} {version} ({language}, on {served_by})")
        else:
            out.append(f"- {name} {version} ({language}; not run, see below)")
    out.append("")

    reports = {}
    for name, _, _, outcome, detail, _ in libraries:
        if outcome == "judged":
            with open(detail, encoding="utf-8") as file:
                reports[name] = json.load(file)

    out.append("## Matrix")
    out.append("")
    # Anchors let the book include a part of this file (mdBook's `{{#include FILE:ANCHOR}}`).
    out.append("<!-- ANCHOR: matrix -->")
    out.append("| library | version | language | passed | failed | not applicable (skipped) |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for name, language, version, outcome, _, _ in libraries:
        if outcome == "judged":
            report = reports[name]
            counts = [report["passed"], report["failed"], report["skipped"]]
        else:
            counts = ["not run", "not run", "not run"]
        row = [name, version, language, *counts]
        out.append("| " + " | ".join(cell(value) for value in row) + " |")
    out.append("<!-- ANCHOR_END: matrix -->")
    out.append("")

    for name, _, version, outcome, detail, _ in libraries:
        out.append(f"## {name} {version}")
        out.append("")
        if outcome != "judged":
            out.append(f"Not run: {detail}")
            out.append("")
            continue
        report = reports[name]
        out.append(f"Profile: `{report.get('profile', '?')}`")
        out.append("")
        failed = [check for check in report["checks"] if check["verdict"] == "failed"]
        skipped = [check for check in report["checks"] if check["verdict"] == "skipped"]
        out.append(f"### Failed ({len(failed)})")
        out.append("")
        if not failed:
            out.append("None.")
            out.append("")
        for check in failed:
            out.append(f"#### {check['name']} ({check['source']})")
            out.append("")
            anchor = f"{name}_{check['name']}"
            out.append(f"<!-- ANCHOR: {anchor} -->")
            out.append("```text")
            out.extend(failure_text(check["name"], check))
            out.append("```")
            out.append(f"<!-- ANCHOR_END: {anchor} -->")
            out.append("")
        out.append(f"### Skipped ({len(skipped)})")
        out.append("")
        if not skipped:
            out.append("None.")
        for check in skipped:
            out.append(f"- `{check['name']}`: {check.get('reason', '')}")
        out.append("")

    sys.stdout.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: report.py FACTS.tsv LIBRARIES.tsv")
    main(sys.argv[1], sys.argv[2])
