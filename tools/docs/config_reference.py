#!/usr/bin/env python3
# Turns `fusetrain train --help-config` (the option table of src/config/options.cpp) into the markdown page
# docs/config-reference.md: one table per config section, keys in the table's order, the same page for the same input.
"""Generate the config key reference from the option table.

    fusetrain train --help-config | tools/docs/config_reference.py --out docs/config-reference.md
    tools/docs/config_reference.py --fusetrain build/bin/fusetrain --out docs/config-reference.md

Without --out the page goes to stdout. Input that does not look like the option table's text (no keys,
or a line that is neither a section, a key nor a key's description) is an error naming the line, so a
change of that format fails here instead of producing a page with keys left out.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

PAGE = "docs/config-reference.md"
REGENERATE = "fusetrain train --help-config | tools/docs/config_reference.py --out docs/config-reference.md"

SECTION = re.compile(r"^([a-z_]+):$")
OPTION = re.compile(r"^  ([a-z_][a-z0-9_.]*) \(([^,()]+), default (.*)\)$")
HELP = re.compile(r"^      (\S.*)$")

HEADER = f"""# Config reference

Every key a config may set, with its type, default and meaning, generated from the option table.

```sh
fusetrain train --help-config                                   # the same list as plain text
{REGENERATE}
```

This page is written by `tools/docs/config_reference.py` from `fusetrain train --help-config`: change the
table in `src/config/options.cpp`, then regenerate the page with the second command above;
`ctest -R docs.config_reference` fails while the two differ.

A key is set in the YAML file as a nested map (`optimizer: {{name: sgd, lr: 0.05}}`) or on the command line
as `--set optimizer.lr=0.05`; `fusetrain train --config F --dry-run` prints the resolved config. A type
`a|b|c` lists the accepted choices. Unknown keys and values outside a key's range are errors that name the
file, line and key ([when things go wrong](troubleshooting.md#config)).
"""


class FormatError(Exception):
    pass


def parse(text):
    """The option table's text as [(section, [(key, type, default, help)])], in order."""
    sections = []
    option = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            option = None
            continue
        if m := SECTION.match(line):
            sections.append((m.group(1), []))
            option = None
        elif m := OPTION.match(line):
            if not sections:
                raise FormatError(f"line {number}: key before any section: {line!r}")
            key, kind, default = m.groups()
            if key.split(".")[0] != sections[-1][0]:
                raise FormatError(f"line {number}: key {key} under section {sections[-1][0]}")
            option = [key, kind.strip(), default, ""]
            sections[-1][1].append(option)
        elif (m := HELP.match(line)) and option is not None:
            option[3] = (option[3] + " " + m.group(1)).strip()
        else:
            raise FormatError(f"line {number}: neither a section, a key nor a key's description: {line!r}")
    keys = [o for _, options in sections for o in options]
    if not keys:
        raise FormatError("no keys in the input: is it the output of `fusetrain train --help-config`?")
    for key, _, _, help_text in keys:
        if not help_text:
            raise FormatError(f"key {key} has no description")
    return sections


def cell(text):
    """Plain text as a markdown table cell: nothing in it may end the cell, open a tag or emphasise."""
    for a, b in (("\\", "\\\\"), ("|", "\\|"), ("*", "\\*"), ("`", "\\`"), ("<", "&lt;"), (">", "&gt;")):
        text = text.replace(a, b)
    return text


def code(text):
    """Text as a code span in a table cell (GFM: a pipe is escaped even there)."""
    return "`" + text.replace("|", "\\|") + "`"


def render(sections):
    out = [HEADER]
    for name, options in sections:
        out.append(f"\n## {name}\n\n| key | type | default | meaning |\n|---|---|---|---|\n")
        for key, kind, default, help_text in options:
            out.append(f"| {code(key)} | {code(kind)} | {code(default)} | {cell(help_text)} |\n")
    return "".join(out)


def write_atomically(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".config-reference.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fusetrain", help="run this fusetrain binary's `train --help-config` (default: read stdin)")
    parser.add_argument("--out", help=f"write the page here (atomically) instead of stdout, e.g. {PAGE}")
    args = parser.parse_args()
    if args.fusetrain:
        text = subprocess.run([args.fusetrain, "train", "--help-config"], check=True, capture_output=True,
                              text=True).stdout
    else:
        text = sys.stdin.read()
    try:
        page = render(parse(text))
    except FormatError as e:
        sys.exit(f"config_reference.py: {e}")
    if args.out:
        write_atomically(args.out, page)
    else:
        sys.stdout.write(page)


if __name__ == "__main__":
    main()
