#!/usr/bin/env python3
"""The layout rules of docs/architecture.md, checked on the source tree:

1. No folder includes "upwards": each folder may include only itself and the folders
   below it in the dependency picture (ALLOWED). Every project include names an existing
   file by its path from the repository root.
2. Namespaces follow folders: attributiond/store/* is attrib::store, core/* is attrib, ...
3. Every error code the code or the tests name ("XYZ_E_..." in quotes) is in the one
   table, core/error_codes.h.

Usage: check_layout.py <repository root>. Prints every violation; exits 1 if any.
"""
import os
import re
import sys

# folder -> folders it may include (besides itself). "proto" is the generated attrib/v1/.
ALLOWED = {
    "core": [],
    "slurm": ["core"],
    "rules": ["core"],
    # Evidence bundles and the tools that judge the engine on them, on top of the engine.
    "rules/evidence": ["core", "rules"],
    "collectors": ["core", "slurm"],
    "common": ["core", "proto"],
    "spank": ["core"],
    "epilog": ["core", "common", "proto"],
    "attributiond/ops": ["core", "proto"],
    "attributiond/store": ["core", "common", "proto"],
    "attributiond/fleet": ["core", "common", "slurm", "attributiond/store"],
    # The webhook POSTs with the collectors' HTTP client.
    "attributiond/sinks": ["core", "common", "collectors", "attributiond/store"],
    "attributiond/pipeline": ["core", "common", "slurm", "rules", "rules/evidence", "collectors", "proto",
                              "attributiond/store",
                              "attributiond/fleet", "attributiond/ops", "attributiond/sinks"],
    "attributiond/dashboard": ["core", "common", "attributiond/store", "attributiond/fleet", "attributiond/ops"],
    # The attribution API judges with the rules engine, archives, and hands verdicts to the sinks.
    "attributiond/api": ["core", "common", "rules", "rules/evidence", "proto", "attributiond/store", "attributiond/sinks",
                         "attributiond/ops"],
    "attributiond/node": ["core", "common", "rules", "collectors", "proto", "attributiond/pipeline",
                          "attributiond/ops"],
    "attributiond/head": ["core", "common", "slurm", "rules", "rules/evidence", "collectors", "proto", "attributiond/store",
                          "attributiond/fleet", "attributiond/pipeline", "attributiond/dashboard",
                          "attributiond/ops", "attributiond/sinks", "attributiond/api"],
    "attributiond": ["core", "common", "rules", "collectors", "attributiond/head", "attributiond/node",
                     "attributiond/ops"],
    "tools/attrib-show": ["core", "common", "rules", "rules/evidence", "proto"],
    "tools/attrib-replay": ["core", "common", "rules", "rules/evidence"],  # common: only the command-line parse
    # POSTs with the collectors' HTTP client, or calls Attribute over gRPC.
    "tools/attrib-submit": ["core", "common", "rules", "rules/evidence", "proto", "collectors"],
    # mine reads the head's archive.
    "tools/attrib-rules": ["core", "common", "rules", "rules/evidence", "proto", "attributiond/store"],
    # Reads and revises the head's archive directly (an admin on the head host).
    "tools/attrib-reattribute": ["core", "common", "rules", "rules/evidence", "proto", "attributiond/store"],
    # Asks slurmctld, slurmdbd, munged, the head and its agents as they ask each other; sends
    # a test POST with the webhook sink's own headers.
    "tools/attrib-doctor": ["core", "common", "slurm", "rules", "proto", "collectors", "attributiond/sinks"],
}

# rules/evidence/ shares the engine's namespace: one attrib::rules API for bundles and rules.
NAMESPACE = {"core": "attrib", "rules/evidence": "attrib::rules", "tools/attrib-show": "attrib::show",
             "tools/attrib-reattribute": "attrib::reattribute",
             "tools/attrib-rules": "attrib::rules_tool", "tools/attrib-doctor": "attrib::doctor"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
NAMESPACE_DECL = re.compile(r"^namespace (attrib(?:::\w+)*) \{", re.M)
CODE = re.compile(r'"([A-Z]+_E_[A-Z0-9_]+)"')


def folder_of(path):
    """The most specific folder of ALLOWED that holds path, or None."""
    best = None
    for folder in ALLOWED:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    if best == "attributiond" and path.count("/") > 1:
        return None  # a file in a room that has no entry: reported as unknown
    return best


def include_folder(include):
    if include.startswith("attrib/v1/"):
        return "proto"
    return folder_of(include)


def source_files(root):
    for top in ("core", "common", "slurm", "rules", "collectors", "spank", "epilog", "attributiond", "tools"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith((".h", ".cpp")):
                    yield os.path.relpath(os.path.join(directory, name), root)


def main():
    root = sys.argv[1]
    problems = []
    for path in sorted(source_files(root)):
        folder = folder_of(path)
        text = open(os.path.join(root, path), encoding="utf-8").read()
        if folder is None:
            problems.append(f"{path}: in no folder of the dependency picture (tests/layout/check_layout.py)")
            continue
        for match in INCLUDE.finditer(text):
            include = match.group(1)
            line = text.count("\n", 0, match.start()) + 1
            if not include.startswith("attrib/v1/") and not os.path.isfile(os.path.join(root, include)):
                problems.append(f"{path}:{line}: \"{include}\" is not a path from the repository root")
                continue
            target = include_folder(include)
            if target != folder and target not in ALLOWED[folder]:
                problems.append(f"{path}:{line}: {folder}/ may not include {include} ({target or 'elsewhere'}/): "
                                f"it is not below {folder}/ in docs/architecture.md")
        wanted = NAMESPACE.get(folder, "attrib::" + folder.split("/")[-1])
        if folder == "attributiond":
            continue  # main.cpp: the global namespace
        for match in NAMESPACE_DECL.finditer(text):
            declared = match.group(1)
            if declared != wanted and not declared.startswith(wanted + "::"):
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{path}:{line}: namespace {declared} in {folder}/: expected {wanted}")

    table = set(re.findall(r'X\(\w+, "([A-Z0-9_]+)"', open(os.path.join(root, "core/error_codes.h")).read()))
    for top in ("core", "common", "slurm", "rules", "collectors", "spank", "epilog", "attributiond", "tools", "tests",
                "bench", "fuzz"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(directory, name)
                text = open(path, encoding="utf-8").read()
                for match in CODE.finditer(text):
                    if match.group(1) not in table:
                        line = text.count("\n", 0, match.start()) + 1
                        problems.append(f"{os.path.relpath(path, root)}:{line}: error code {match.group(1)} "
                                        "is not in core/error_codes.h")

    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} layout problem(s); docs/architecture.md explains the rules", file=sys.stderr)
        return 1
    print("layout: every include goes downwards, namespaces follow folders, every error code is in the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
