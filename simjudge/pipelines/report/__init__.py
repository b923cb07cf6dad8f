"""simjudge.pipelines.report: self-contained static HTML reports of audit and arena runs.

* :mod:`~simjudge.pipelines.report.page`: the shared page skeleton (Jinja2 template
  ``templates/page.html.j2``), :class:`Section`, inline SVG figures (:func:`svg`),
  :func:`write_page`. Other reports (the arena's) add their own sections and templates.
* :mod:`~simjudge.pipelines.report.audit`: :func:`write_audit_report`, the audit's
  ``report.html``.
"""

from __future__ import annotations

from .audit import audit_sections, write_audit_report
from .page import Section, environment, fmt, render_page, svg, write_page

__all__ = [
    "Section",
    "audit_sections",
    "environment",
    "fmt",
    "render_page",
    "svg",
    "write_audit_report",
    "write_page",
]
