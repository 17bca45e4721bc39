# A report page built from blocks (headings, paragraphs, tables, figures, preformatted text) and written
# both as markdown and as HTML, with a contents.json that lists every section's tables and figures.
"""Page model shared by report tools that write markdown and HTML from the same content."""
from __future__ import annotations

import html
import json
import os
import pathlib


class Page:
    def __init__(self, title: str, out: pathlib.Path):
        self.title, self.out = title, out
        self.blocks: list[tuple] = []
        self.sections: list[dict] = []

    def section(self, title: str) -> None:
        self.blocks.append(("h2", title))
        self.sections.append({"title": title, "tables": [], "figures": [], "absent": []})

    def text(self, paragraph: str) -> None:
        self.blocks.append(("p", paragraph))

    def absent(self, reason: str) -> None:
        """A part of the section that could not be produced here, and why (shown as a paragraph)."""
        self.blocks.append(("p", f"**Not available:** {reason}"))
        self.sections[-1]["absent"].append(reason)

    def table(self, name: str, header: list[str], rows: list[list]) -> None:
        rows = [["" if c is None else str(c) for c in row] for row in rows]
        self.blocks.append(("table", header, rows))
        self.sections[-1]["tables"].append({"name": name, "columns": header, "rows": len(rows),
                                            "empty_cells": sum(c == "" for row in rows for c in row)})

    def markdown_tables(self, name: str, text: str) -> None:
        """Tables given as markdown text (e.g. a benchmark's output): kept as they are, each one counted."""
        table: list[list[str]] = []
        for line in text.splitlines() + [""]:
            if line.startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if not all(set(c) <= set("-: ") for c in cells):
                    table.append(cells)
            elif table:
                self.table(f"{name} {len(self.sections[-1]['tables']) + 1}", table[0], table[1:])
                table = []
            elif line.strip():
                self.text(line.strip())

    def figure(self, path: pathlib.Path, caption: str) -> None:
        self.blocks.append(("img", path, caption))
        self.sections[-1]["figures"].append(str(path.relative_to(self.out)))

    def pre(self, text: str) -> None:
        self.blocks.append(("pre", text))

    def link(self, path: pathlib.Path, text: str, note: str = "") -> None:
        """A paragraph linking a file (inside or outside the page's folder) by its path relative to the page."""
        relative = pathlib.Path(os.path.relpath(path, self.out)).as_posix()
        self.blocks.append(("a", relative, text, note))
        self.sections[-1].setdefault("links", []).append(relative)

    def markdown(self) -> str:
        lines = [f"# {self.title}", ""]
        for block in self.blocks:
            kind = block[0]
            if kind == "h2":
                lines += [f"## {block[1]}", ""]
            elif kind == "p":
                lines += [block[1], ""]
            elif kind == "table":
                lines += ["| " + " | ".join(block[1]) + " |", "|" + "---|" * len(block[1])]
                lines += ["| " + " | ".join(row) + " |" for row in block[2]] + [""]
            elif kind == "img":
                lines += [f"![{block[2]}]({block[1].relative_to(self.out)})", ""]
            elif kind == "pre":
                lines += ["```", block[1].rstrip("\n"), "```", ""]
            elif kind == "a":
                lines += [f"[{block[2]}]({block[1]}){block[3]}", ""]
        return "\n".join(lines)

    def html(self) -> str:
        e = html.escape
        parts = [f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{e(self.title)}</title>",
                 "<style>body{font-family:sans-serif;margin:2em;max-width:70em} table{border-collapse:collapse}"
                 " td,th{border:1px solid #bbb;padding:3px 8px;text-align:right} img{max-width:100%}"
                 " pre{background:#f4f4f4;padding:.5em}</style></head><body>", f"<h1>{e(self.title)}</h1>"]
        for block in self.blocks:
            kind = block[0]
            if kind == "h2":
                parts.append(f"<h2>{e(block[1])}</h2>")
            elif kind == "p":
                text = e(block[1])
                while text.count("**") >= 2:
                    text = text.replace("**", "<b>", 1).replace("**", "</b>", 1)
                parts.append(f"<p>{text}</p>")
            elif kind == "table":
                head = "".join(f"<th>{e(c)}</th>" for c in block[1])
                body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>\n" for row in block[2])
                parts.append(f"<table>\n<tr>{head}</tr>\n{body}</table>")
            elif kind == "img":
                parts.append(f"<figure><img src=\"{e(str(block[1].relative_to(self.out)))}\" alt=\"{e(block[2])}\">"
                             f"<figcaption>{e(block[2])}</figcaption></figure>")
            elif kind == "pre":
                parts.append(f"<pre>{e(block[1])}</pre>")
            elif kind == "a":
                parts.append(f"<p><a href=\"{e(block[1])}\">{e(block[2])}</a>{e(block[3])}</p>")
        parts.append("</body></html>\n")
        return "\n".join(parts)

    def write(self, stem: str) -> list[pathlib.Path]:
        self.out.mkdir(parents=True, exist_ok=True)
        paths = [self.out / f"{stem}.md", self.out / f"{stem}.html", self.out / "contents.json"]
        paths[0].write_text(self.markdown())
        paths[1].write_text(self.html())
        paths[2].write_text(json.dumps({"title": self.title, "sections": self.sections}, indent=1) + "\n")
        return paths
