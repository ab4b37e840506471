"""The static report page: one ``index.html`` with relative links only (no server, no
scripts, no external assets), built from a list of sections."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import pandas as pd

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
.wide { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
caption { text-align: left; font-weight: 600; padding: 0.2em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f4f4f4; font-weight: 600; } td:first-child, th:first-child, td.t { text-align: left; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.4em 0.8em; }
nav a { margin-right: 1em; } code { background: #f4f4f4; padding: 0 0.2em; }
"""


@dataclass
class Section:
    """One part of the page: a heading, paragraphs, figures (relative path, caption),
    tables (DataFrame of strings), links (relative path, text) and notes (shown boxed);
    shown in that order -- notes, paragraphs, figures, tables, links -- or with the tables
    before the figures (``tables_first``)."""

    anchor: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    tables: list[pd.DataFrame] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tables_first: bool = False


NUMBER = re.compile(r"^(\u26a0 )?[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?( \S+)?$")


def _cell(value) -> str:
    """One cell: numbers (a flag, a unit) right-aligned, text left-aligned."""
    text = str(value)
    kind = "" if NUMBER.match(text) or text in ("", "-") else ' class="t"'
    return f"<td{kind}>{html.escape(text)}</td>"


def _table_html(table: pd.DataFrame) -> str:
    """A table (its ``attrs["caption"]`` as caption), scrolled sideways inside the page
    where it is still too wide."""
    caption = table.attrs.get("caption")
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>"
                   for row in table.itertuples(index=False))
    top = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (f'<div class="wide"><table>{top}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _inline(text: str) -> str:
    """Escaped text with `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def render_page(title: str, sections: list[Section]) -> str:
    """The whole HTML document as text."""
    esc = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
             f"<h1>{esc(title)}</h1>",
             "<nav>" + "".join(f'<a href="#{esc(s.anchor)}">{esc(s.title)}</a>'
                               for s in sections) + "</nav>"]
    for s in sections:
        parts.append(f'<h2 id="{esc(s.anchor)}">{esc(s.title)}</h2>')
        parts += [f'<p class="note">{_inline(n)}</p>' for n in s.notes]
        parts += [f"<p>{_inline(p)}</p>" for p in s.paragraphs]
        tables = [_table_html(t) for t in s.tables]
        figures = [f'<figure><a href="{esc(path)}"><img src="{esc(path)}" '
                   f'alt="{esc(caption)}"></a><figcaption>{esc(caption)}</figcaption></figure>'
                   for path, caption in s.figures]
        parts += tables + figures if s.tables_first else figures + tables
        if s.links:
            parts.append("<ul>" + "".join(f'<li><a href="{esc(p)}">{esc(t)}</a></li>'
                                          for p, t in s.links) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
