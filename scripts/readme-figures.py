#!/usr/bin/env python3
"""The README's time figures, rendered from the run records the test suite writes
(scripts/test.sh -> build/test-run.json, kept under docs/runs/ by scripts/record-run.sh),
so that no figure in the README is typed from memory.

  readme-figures.py --write SRC   replace the README's generated block
  readme-figures.py --check SRC   exit 1 when the block differs from the records
"""
import json
import os
import re
import sys

BEGIN = "<!-- BEGIN GENERATED: scripts/readme-figures.py from docs/runs/*.json -->"
END = "<!-- END GENERATED -->"

# (record file, where it ran, its budget's words)
RUNS = [
    ("fresh-clone.json",
     "The test suite from a fresh clone on a machine whose compiler cache an earlier build had warmed (as CI's is)",
     "its budget is 45 minutes"),
    ("fresh-root.json",
     "From nothing, on a fresh Debian 12 root with installation included (`scripts/in-debian.sh`)",
     "the target is 55 minutes"),
]


def minutes(seconds):
    return f"{seconds / 60:.1f} min"


def stage_name(name):
    # scripts/test.sh names its ctest stage by the tree it ran in ("build (/path/build)").
    return "ctest, main tree" if re.match(r"^build \(.*\)$", name) else name


def stage_words(record, count=3):
    stages = sorted(record["stages"], key=lambda s: -s["seconds"])[:count]
    return ", ".join(f"{stage_name(s['name'])} {s['seconds']:,} s" for s in stages)


def render_run(record, where, budget):
    result = "PASSED" if record["passed"] else "FAILED"
    return (f"- {where}: {result} in **{minutes(record['total_seconds'])}** ({record['total_seconds']:,} s, "
            f"commit {record['commit']}, finished {record['finished']}); {budget}. Slowest stages: "
            f"{stage_words(record)}.")


def render(src):
    lines = [BEGIN, "Measured on 2 cores (docs/runs/, docs/benchmarks.md):", ""]
    for name, where, budget in RUNS:
        path = os.path.join(src, "docs", "runs", name)
        if not os.path.exists(path):
            continue  # not measured yet: no figure rather than an old one
        with open(path, encoding="utf-8") as f:
            lines.append(render_run(json.load(f), where, budget))
    demo = os.path.join(src, "docs", "runs", "demo.json")
    if os.path.exists(demo):
        with open(demo, encoding="utf-8") as f:
            record = json.load(f)
        lines.append(f"- The demo on a fresh Debian 12 root printed its verdict in `sacct` "
                     f"**{record['seconds_to_verdict']:,} s** after it started, installing packages and building "
                     f"included (commit {record['commit']}, finished {record['finished']}).")
    lines.append(END)
    return "\n".join(lines)


def current_block(readme_text):
    start, end = readme_text.find(BEGIN), readme_text.find(END)
    if start < 0 or end < start:
        return None, None, None
    return readme_text[:start], readme_text[start:end + len(END)], readme_text[end + len(END):]


def main(argv):
    if len(argv) != 3 or argv[1] not in ("--write", "--check"):
        print(__doc__, file=sys.stderr)
        return 2
    src = argv[2]
    readme = os.path.join(src, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    before, block, after = current_block(text)
    if block is None:
        print(f"{readme}: no generated block ({BEGIN})", file=sys.stderr)
        return 1
    expected = render(src)
    if argv[1] == "--write":
        with open(readme, "w", encoding="utf-8") as f:
            f.write(before + expected + after)
        return 0
    if block != expected:
        print("README.md's time figures differ from docs/runs/*.json: run scripts/readme-figures.py --write .\n"
              f"expected:\n{expected}\nfound:\n{block}", file=sys.stderr)
        return 1
    print("README time figures match docs/runs/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
