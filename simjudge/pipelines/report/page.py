"""The static HTML page every run report shares: a Jinja2 skeleton with sections and figures.

A report is a list of :class:`Section` objects (each rendered from its own template)
placed in ``templates/page.html.j2``, which adds the title, a table of contents, the run's
config and the library versions. Figures are matplotlib figures inlined as SVG
(:func:`svg`); nothing is fetched from the network, so the page is self-contained (videos
are linked files beside it).

Example:
    >>> html = render_page("demo", [Section("s1", "One", "<p>hello</p>")], {"seed": 0}, {})
    >>> '<h2 id="s1">One</h2>' in html and "hello" in html
    True
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from simjudge.tasks.spec import atomic_write

__all__ = ["Section", "environment", "fmt", "render_page", "svg", "write_page"]

_TEMPLATES = Path(__file__).with_name("templates")


@dataclass(frozen=True)
class Section:
    """One section of a report page.

    Attributes:
        id: Anchor id (letters, digits, ``-``).
        title: Heading.
        html: The section's body (already rendered, trusted HTML from a template).
    """

    id: str
    title: str
    html: str


def fmt(value: Any, digits: int = 1) -> str:
    """A number for a table cell: ``-`` for None/NaN, ints as ints, floats rounded."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def environment() -> jinja2.Environment:
    """The Jinja2 environment of the report templates (autoescaping on)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
        autoescape=jinja2.select_autoescape(("html", "j2")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=1, default=str, sort_keys=True)
    return env


def svg(fig: Any) -> Markup:
    """A matplotlib figure as inline SVG markup (the figure is closed)."""
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return Markup(text[text.index("<svg") :])


def render_page(
    title: str,
    sections: Sequence[Section],
    config: Mapping[str, Any],
    versions: Mapping[str, Any],
    subtitle: str = "",
) -> str:
    """The whole page as HTML text."""
    template = environment().get_template("page.html.j2")
    return template.render(
        title=title,
        subtitle=subtitle,
        sections=[(s.id, s.title, Markup(s.html)) for s in sections],
        config=config,
        versions=versions,
    )


def write_page(path: str | Path, title: str, sections: Sequence[Section], config: Mapping[str, Any],
               versions: Mapping[str, Any], subtitle: str = "") -> Path:
    """Render and write a page atomically; return its path."""
    path = Path(path)
    atomic_write(path, render_page(title, sections, config, versions, subtitle))
    return path
