#!/usr/bin/python3
"""Writes what the table of `pdsp train`'s settings (src/learners/train_parameters.cpp) decides
outside the executable, from `pdsp train --list-parameters`:
  - python/pdsp/train_parameters.py: the Python Estimator's flags and defaults;
  - docs/guide.md: the settings table of "pdsp train", between its two marker comments.
With --check it writes nothing and fails, naming the stale file, when either differs from what
it would write (CTest runs it so, as docs.train_parameters).

usage: /usr/bin/python3 run/train_parameters.py --pdsp build/release/pdsp [--check]"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON_MODULE = os.path.join(REPO, "python", "pdsp", "train_parameters.py")
GUIDE = os.path.join(REPO, "docs", "guide.md")
BEGIN = "<!-- train-parameters: written by run/train_parameters.py from pdsp train --list-parameters -->"
END = "<!-- train-parameters: end -->"


def python_module(rows):
    lines = ['"""The settings of `pdsp train` that the Estimator passes on: flag and default of each,',
             "in the order of pdsp's table (src/learners/train_parameters.cpp). Written by",
             'run/train_parameters.py from `pdsp train --list-parameters`: do not edit."""',
             "", "PARAMETERS = {"]
    for row in rows:
        default = {"int": int, "float": float, "str": str}[row["type"]](row["default"])
        lines.append(f'    "{row["name"]}": {{"flag": "{row["flag"]}", "default": {default!r}}},')
    return "\n".join(lines + ["}", ""])


def guide_table(rows):
    lines = ["| flag | default | values | meaning |", "|---|---|---|---|"]
    group = None
    for row in rows:
        if row["group"] != group:
            group = row["group"]
            lines.append(f"| **{group}** | | | |")
        default = "required" if row["required"] else (f"`{row['default']}`" if row["default"]
                                                        else "none")
        values = row["rule"].replace("one of ", "")
        meaning = row["help"].replace("\n  ", "; ").replace("\n", " ").replace("|", "\\|")
        meaning = meaning.replace("the learner:; ", "")
        lines.append(f"| `{row['flag']}` | {default} | {values} | {meaning} |")
    return "\n".join(lines)


def with_guide_table(text, table):
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"{GUIDE}: the marker comments of the settings table are missing")
    return text[:start + len(BEGIN)] + "\n" + table + "\n" + text[end:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pdsp", required=True, help="the pdsp executable")
    parser.add_argument("--check", action="store_true", help="fail when a file is stale")
    args = parser.parse_args()
    listing = subprocess.run([args.pdsp, "train", "--list-parameters"], capture_output=True,
                             text=True, check=True).stdout
    rows = [json.loads(line) for line in listing.splitlines()]
    # The Estimator chooses the files itself: only the hyper-parameters go to Python.
    hyper = [row for row in rows if row["group"] != "Files"]
    with open(GUIDE) as f:
        guide = f.read()
    wanted = {PYTHON_MODULE: python_module(hyper), GUIDE: with_guide_table(guide, guide_table(rows))}
    stale = []
    for path, text in wanted.items():
        current = open(path).read() if os.path.exists(path) else None
        if current == text:
            continue
        if args.check:
            stale.append(os.path.relpath(path, REPO))
        else:
            with open(path, "w") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path, REPO)}")
    if stale:
        sys.exit(f"stale: {', '.join(stale)}: run /usr/bin/python3 run/train_parameters.py "
                 "--pdsp PDSP after changing src/learners/train_parameters.cpp")
    if args.check:
        print("train parameters: the Python defaults and the guide's table match pdsp's table")


if __name__ == "__main__":
    main()
