#!/usr/bin/env python3
"""Docs that cannot drift from the code: every claim the docs make that a program can
check is checked against the real thing.

  docs_drift.py paths    SRC
      every repository path the docs and the README name exists
  docs_drift.py configs  SRC ATTRIBUTIOND
      every configuration example in them loads with `attributiond --check`
      (the real configuration loader, rule pack and collector registry)
  docs_drift.py packages SRC
      docs/admin-guide.md's package table names every program and plugin each package of
      packaging/rpm/attrib.spec installs
  docs_drift.py commands SRC PROGRAM...
      every command line they show for an attrib program parses with that program's own
      option parser (ATTRIB_PARSE_ONLY=1: the program stops right after parsing)

Each failure names the file and line, so the fix is one look away.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile


def doc_files(src):
    files = [os.path.join(src, "README.md")]
    for root, _, names in os.walk(os.path.join(src, "docs")):
        files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".md")]
    return files


class Block:
    """A fenced code block: its language tag, first line number and lines."""

    def __init__(self, path, line, lang, lines):
        self.path, self.line, self.lang, self.lines = path, line, lang, lines


def fenced_blocks(path):
    blocks, current = [], None
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            stripped = text.rstrip("\n")
            fence = re.match(r"^\s*```(\S*)", stripped)
            if fence and current is None:
                current = Block(path, number + 1, fence.group(1), [])
            elif fence:
                blocks.append(current)
                current = None
            elif current is not None:
                current.lines.append(stripped)
    return blocks


def prose_lines(path):
    """(line number, text) of every line outside fenced blocks."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if re.match(r"^\s*```", text):
                inside = not inside
            elif not inside:
                yield number, text


# ---- paths -----------------------------------------------------------------------

def repository_roots(src):
    """Top-level names a path must start with to be taken for a repository path."""
    return {n for n in os.listdir(src) if not n.startswith(".") and n not in ("build", "build-clang")}


def named_paths(path, roots):
    """(line, path, relative_to) for every word that names a repository path (one that
    starts with a top-level folder, in prose or in code) and every link target."""
    doc_dir = os.path.dirname(path)
    starts = "|".join(re.escape(r) for r in sorted(roots))
    word = re.compile(rf"(?<![\w/.~$<-])(?:{starts})/[\w./+-]*")
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            for name in word.findall(text):
                yield number, name, None
            for target in re.findall(r"\]\(([^)\s]+)\)", text):
                if not re.match(r"^[a-z]+:", target) and not target.startswith("#"):
                    yield number, target.split("#")[0], doc_dir


def check_paths(src):
    roots = repository_roots(src)
    failures = []
    for doc in doc_files(src):
        for number, name, relative_to in named_paths(doc, roots):
            name = re.sub(r":\d+(-\d+)?$", "", name).rstrip(".,;:)")
            if not name or re.search(r"[<>{}*$]|\.\.\.", name):
                continue  # a placeholder or a pattern, not one path
            if relative_to is not None:
                target = os.path.normpath(os.path.join(relative_to, name))
            elif "/" in name and name.split("/")[0] in roots:
                target = os.path.join(src, name)
            else:
                continue
            if not os.path.exists(target):
                failures.append(f"{os.path.relpath(doc, src)}:{number}: names {name}, which does not exist")
    return failures


# ---- configuration examples ----------------------------------------------------

def config_sections(attributiond):
    reference = subprocess.run([attributiond, "--config-reference"], capture_output=True, text=True, check=True)
    return set(re.findall(r"^\| `([a-z_]+)[.`]", reference.stdout, re.M)) - {"options"}


def is_config_example(block, sections):
    for line in block.lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key = re.match(r"^([a-z_]+):", line)
        return bool(key and key.group(1) in sections)
    return False


def as_test_config(text, pack_dir):
    """The example as written, reading the repository's rule pack instead of the installed
    one, and with the one required key (`cluster`) when a fragment leaves it to the shipped
    file; nothing else is changed, so a key or form the loader rejects still fails."""
    if not re.search(r"^cluster:", text, re.M):
        text = "cluster: docs-example\n" + text
    if re.search(r"^rules:", text, re.M):
        if re.search(r"^\s+pack_dir:", text, re.M):
            return re.sub(r"^(\s+pack_dir:).*$", rf"\1 {pack_dir}", text, flags=re.M)
        return re.sub(r"^rules:.*$", f"rules:\n  pack_dir: {pack_dir}", text, count=1, flags=re.M)
    return text + f"\nrules:\n  pack_dir: {pack_dir}\n"


def check_configs(src, attributiond):
    sections = config_sections(attributiond)
    failures, checked = [], 0
    pack = os.path.join(src, "rules", "pack")
    with tempfile.TemporaryDirectory() as scratch:
        for doc in doc_files(src):
            for block in fenced_blocks(doc):
                if not is_config_example(block, sections):
                    continue
                checked += 1
                config = os.path.join(scratch, "attrib.yaml")
                with open(config, "w", encoding="utf-8") as f:
                    f.write(as_test_config("\n".join(block.lines) + "\n", pack))
                run = subprocess.run([attributiond, "--check", "--config", config], capture_output=True, text=True)
                if run.returncode != 0:
                    reason = (run.stderr.strip() or run.stdout.strip()).splitlines()[-1:]
                    failures.append(f"{os.path.relpath(doc, src)}:{block.line}: the configuration example "
                                    f"does not load: {' '.join(reason)}")
        # The file the docs tell an admin to start from.
        shipped = os.path.join(src, "packaging", "rpm", "attrib.yaml")
        config = os.path.join(scratch, "shipped.yaml")
        with open(shipped, encoding="utf-8") as f, open(config, "w", encoding="utf-8") as out:
            out.write(as_test_config(f.read(), pack))
        checked += 1
        if subprocess.run([attributiond, "--check", "--config", config], capture_output=True).returncode != 0:
            failures.append("packaging/rpm/attrib.yaml: the shipped configuration does not load")
    if checked == 0:
        failures.append("no configuration example found in the docs: the extraction is broken")
    print(f"{checked} configuration examples checked")
    return failures


# ---- command lines -----------------------------------------------------------------

SHELL_ENDS = {"|", "||", "&&", ";", ">", ">>", "<", "2>&1", "&"}


COMMAND_BLOCKS = {"", "sh", "bash", "console", "shell"}


def command_lines(path, programs):
    """(line, argv, is_mention) for every command of an attrib program the doc shows:
    lines of shell code blocks, and code spans in prose that give arguments (a mention:
    its last option or argument may be left out, `attrib-show --since`, `attrib-rules eval`)."""
    for block in fenced_blocks(path):
        if block.lang not in COMMAND_BLOCKS:
            continue
        pending = ""
        for offset, line in enumerate(block.lines):
            text = pending + line.strip()
            if text.endswith("\\"):
                pending = text[:-1] + " "
                continue
            pending = ""
            text = re.sub(r"^(\$|#)\s+", "", text)
            argv = split_command(text, programs)
            if argv:
                yield block.line + offset, argv, False
    for number, text in prose_lines(path):
        for span in re.findall(r"`([^`]+)`", text):
            argv = split_command(span, programs)
            if argv and len(argv) > 1:
                yield number, argv, True


def split_command(text, programs):
    """The argv a reader would type: a synopsis's [optional] parts given, a placeholder
    (`<job id>`, `DIR`) one value, `DIR...` one DIR, nothing after a pipe or redirection."""
    if text.split(" ", 1)[0] not in programs:
        return None
    text = re.sub(r"<[^<>]*>", lambda m: m.group(0).replace(" ", "_"), text)
    text = text.replace("[", " ").replace("]", " ")
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        return None
    argv = []
    for word in words:
        if word in SHELL_ENDS or word.startswith(">") or word.startswith("2>"):
            break
        word = word[:-3] if word.endswith("...") else word
        if re.match(r"^(<.*>|[A-Z][A-Z_]*)$", word):
            word = "1"  # a placeholder (DIR, N, <jobid>): a value every option type accepts
        if word:
            argv.append(word)
    return argv


def parses(program, argv, environment):
    run = subprocess.run([program] + argv, capture_output=True, text=True, env=environment,
                         stdin=subprocess.DEVNULL, timeout=30)
    if run.returncode == 0 and "parsed" in run.stdout:
        return None
    return " ".join((run.stderr.strip() or run.stdout.strip()).splitlines()[:1]) or f"exit {run.returncode}"


def check_commands(src, program_files):
    programs = {os.path.basename(p): p for p in program_files}
    failures, checked = [], 0
    environment = dict(os.environ, ATTRIB_PARSE_ONLY="1")
    for doc in doc_files(src):
        for number, argv, is_mention in command_lines(doc, programs):
            checked += 1
            reason = parses(programs[argv[0]], argv[1:], environment)
            if reason and is_mention:  # `attrib-show --run`, `attrib-rules eval`: the value left to the reader
                reason = parses(programs[argv[0]], argv[1:] + ["1"], environment) and reason
            if reason:
                failures.append(f"{os.path.relpath(doc, src)}:{number}: `{' '.join(argv)}` does not parse: {reason}")
    if checked == 0:
        failures.append("no command line found in the docs: the extraction is broken")
    print(f"{checked} command lines checked against {len(programs)} programs' parsers")
    return failures


# ---- the package table ------------------------------------------------------------

PROGRAM_DIRS = ("/usr/bin/", "/usr/libexec/", "/usr/lib64/slurm/")


def packaged_programs(spec):
    """{package: [program or plugin file names]} from the spec's %files sections."""
    packages, current = {}, None
    with open(spec, encoding="utf-8") as f:
        for line in f:
            section = re.match(r"^%files\s+(\S+)", line)
            if section:
                current = packages.setdefault("attrib-" + section.group(1), [])
            elif line.startswith("%") and not line.startswith("%dir") and not line.startswith("%config"):
                current = None  # %changelog, %post ...: no longer a file list
            elif current is not None:
                path = line.split()[-1] if line.strip() and not line.startswith("#") else ""
                if path.startswith(PROGRAM_DIRS):
                    current.append(os.path.basename(path))
    return packages


def check_packages(src):
    guide = os.path.join(src, "docs", "admin-guide.md")
    rows = {}
    with open(guide, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            row = re.match(r"^\| `(attrib-[a-z]+)` \|", line)
            if row:
                rows[row.group(1)] = (number, line)
    failures = []
    for package, programs in packaged_programs(os.path.join(src, "packaging", "rpm", "attrib.spec")).items():
        if package not in rows:
            failures.append(f"docs/admin-guide.md: the package table has no row for {package}")
            continue
        number, row = rows[package]
        failures += [f"docs/admin-guide.md:{number}: {package} installs {name}, which its row does not name"
                     for name in programs if name not in row]
    return failures


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    what, src = argv[1], os.path.abspath(argv[2])
    if what == "paths":
        failures = check_paths(src)
    elif what == "configs":
        failures = check_configs(src, argv[3])
    elif what == "packages":
        failures = check_packages(src)
    elif what == "commands":
        failures = check_commands(src, argv[3:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    if not failures:
        print(f"docs {what}: all true")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
