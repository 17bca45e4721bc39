# A report page built from blocks (headings, paragraphs, tables, figures, preformatted text) and written
# both as markdown and as HTML, with a contents.json that lists every section's tables and figures.
"""Page model shared by report tools that write markdown and HTML from the same content."""
from __future__ import annotations

import html
import json
import os
import pathlib
import re


# Tables apart from each other and from the text, captioned on the left, as wide as the window (text lines
# are kept short); numbers right-aligned in their columns, words (verdicts, names, reasons) left-aligned.
STYLE = ("body{font-family:sans-serif;margin:2em} p,pre,h1,h2{max-width:70em} p{text-align:left}"
         " div.table{overflow-x:auto} table{border-collapse:collapse;margin:.4em 0 1.8em;font-size:.92em}"
         " caption{caption-side:top;text-align:left;font-weight:bold;padding:0 0 .35em}"
         " td,th{border:1px solid #bbb;padding:3px 8px;text-align:right;vertical-align:top}"
         " td.text,th.text{text-align:left} th{background:#f0f0f0} img{max-width:100%}"
         " figure{margin:1em 0 2em} figure.inline{display:inline-block;margin:0 1.5em 1.5em 0}"
         " pre{background:#f4f4f4;padding:.5em} code{background:#f4f4f4;padding:0 .2em}")
NUMBER = re.compile(r"^[+-]?[0-9][0-9.,]*( ?(x|%|x faster|x slower))?( -> [+-]?[0-9][0-9.,]*)?$")


def is_number(cell: str) -> bool:
    """A cell right-aligned as a number: 12.3, -4.5, +0.61, 1.71x, 87 %, 1783x faster, 2.98 -> 2.40."""
    return bool(NUMBER.match(cell.strip()))


def inline_html(text: str) -> str:
    """A paragraph's markdown emphasis as HTML: **bold** and `code`."""
    text = html.escape(text)
    while text.count("**") >= 2:
        text = text.replace("**", "<b>", 1).replace("**", "</b>", 1)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def html_table(header: list[str], rows: list[list[str]], caption: str) -> str:
    """One table with its caption; a column is right-aligned when its cells are numbers, else left."""
    numeric = [all(is_number(row[k]) or row[k] in ("-", "not run", "n/a") for row in rows)
               and any(is_number(row[k]) for row in rows) for k in range(len(header))]
    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" if numeric[k] else f"<th class=\"text\">{e(c)}</th>"
                   for k, c in enumerate(header))
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" if numeric[k] else f"<td class=\"text\">{e(c)}</td>"
                                    for k, c in enumerate(row)) + "</tr>\n" for row in rows)
    return f"<div class=\"table\"><table>\n<caption>{e(caption)}</caption>\n<tr>{head}</tr>\n{body}</table></div>"


class Page:
    def __init__(self, title: str, out: pathlib.Path):
        self.title, self.out = title, out
        self.blocks: list[tuple] = []
        self.sections: list[dict] = []
        self.table_count = 0

    def section(self, title: str) -> None:
        self.blocks.append(("h2", title))
        self.sections.append({"title": title, "tables": [], "figures": [], "absent": []})

    def text(self, paragraph: str) -> None:
        self.blocks.append(("p", paragraph))

    def absent(self, reason: str) -> None:
        """A part of the section that could not be produced here, and why (shown as a paragraph)."""
        self.blocks.append(("p", f"**Not available:** {reason}"))
        self.sections[-1]["absent"].append(reason)

    def flagged(self, names: list[str], paragraph: str) -> None:
        """A paragraph about some of the section's runs (e.g. too short to judge); contents.json names them."""
        self.blocks.append(("p", paragraph))
        self.sections[-1].setdefault("flagged", []).extend(names)

    def table(self, name: str, header: list[str], rows: list[list]) -> None:
        """A table captioned "Table N. name" (numbered over the page); contents.json keeps its cells."""
        rows = [["" if c is None else str(c) for c in row] for row in rows]
        self.table_count += 1
        caption = f"Table {self.table_count}. {name}"
        self.blocks.append(("table", header, rows, caption))
        self.sections[-1]["tables"].append({"name": name, "caption": caption, "columns": header, "rows": len(rows),
                                            "empty_cells": sum(c == "" for row in rows for c in row),
                                            "cells": rows})

    def markdown_tables(self, name: str, text: str) -> None:
        """Tables given as markdown text (e.g. a benchmark's output): kept as they are, each one counted and
        named `name` with the line of text above it."""
        table: list[list[str]] = []
        above = ""  # a line of text not yet written: the caption of a table that follows it, else a paragraph
        for line in text.splitlines() + [""]:
            if line.startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if not all(set(c) <= set("-: ") for c in cells):
                    table.append(cells)
            elif table:
                self.table(f"{name}: {above}" if above else name, table[0], table[1:])
                table, above = [], ""
            elif line.strip():
                if above:
                    self.text(above)
                above = line.strip()
        if above:
            self.text(above)

    def figure(self, path: pathlib.Path, caption: str, series: dict | None = None, inline: bool = False) -> None:
        """A figure; `series` (panel -> the curves drawn on it) goes to contents.json beside its path; inline
        figures (small samples) stand side by side on the HTML page."""
        self.blocks.append(("img", path, caption, inline))
        self.sections[-1]["figures"].append(str(path.relative_to(self.out)))
        if series is not None:
            self.sections[-1].setdefault("series", {})[str(path.relative_to(self.out))] = series

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
                lines += [f"*{block[3]}*", ""]
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
                 f"<style>{STYLE}</style></head><body>", f"<h1>{e(self.title)}</h1>"]
        for block in self.blocks:
            kind = block[0]
            if kind == "h2":
                parts.append(f"<h2>{e(block[1])}</h2>")
            elif kind == "p":
                parts.append(f"<p>{inline_html(block[1])}</p>")
            elif kind == "table":
                parts.append(html_table(*block[1:]))
            elif kind == "img":
                opening = "<figure class=\"inline\">" if block[3] else "<figure>"
                parts.append(f"{opening}<img src=\"{e(str(block[1].relative_to(self.out)))}\" alt=\"{e(block[2])}\">"
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
