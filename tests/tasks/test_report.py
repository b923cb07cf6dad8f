"""``report.html``: rendered with Jinja2, checked in real headless Chromium (Debian package)."""

from __future__ import annotations

import pytest

from simjudge.pipelines.audit import AuditConfig, run_audit
from simjudge.pipelines.report import Section, render_page
from simjudge.pipelines.report.browser import chromium_path, inspect_page

pytestmark = pytest.mark.timeout(300)


def test_page_escapes_config_and_keeps_sections():
    html = render_page("t", [Section("a", "A <b>", "<p id='x'>body</p>")], {"k": "<script>"}, {})
    assert "<p id='x'>body</p>" in html  # section bodies are trusted template output
    assert "<script>" not in html and "&lt;script&gt;" in html  # config is escaped
    assert "A &lt;b&gt;" in html


@pytest.mark.skipif(chromium_path() is None, reason="apt-get install -y chromium")
def test_audit_report_in_headless_chromium(tmp_path):
    config = AuditConfig(policy=("oracle=oracle", "delay=oracle-delay", "zero=zero"),
                         tasks=("OpenDrawer-v0",), seeds=2, out=str(tmp_path), executor="serial",
                         videos=1, bootstrap=100, horizon=40)
    audit = run_audit(config, progress=False)
    report = tmp_path / "report.html"
    assert report.exists() and len(audit["videos"]) == 3
    page = inspect_page(report)
    assert page.errors == [], page.errors
    counts = page.counts
    assert counts["ready"] == "complete" and counts["title"] == "simjudge audit"
    assert {"MC", "MP", "PPL", "CRA", "STR", "MC@100", "Wilson 95% CI"} <= set(counts["th"])
    assert counts["table"] >= 5 and counts["rows"] >= 9
    assert counts["svg"] == 1  # one figure per task, inline SVG
    assert counts["video"] == 3
    assert "Task OpenDrawer-v0" in counts["h2"] and "Config and versions" in counts["h2"]
    assert all((tmp_path / v).stat().st_size > 0 for v in audit["videos"])


@pytest.mark.skipif(chromium_path() is None, reason="apt-get install -y chromium")
def test_browser_check_catches_a_broken_page(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><table><tr><th>MC</th></tr></table>"
                      "<script>console.error('bad'); undefinedFunction();</script></body></html>")
    page = inspect_page(broken)
    assert any("bad" in e for e in page.errors)
    assert any("undefinedFunction" in e for e in page.errors)
    assert page.counts["table"] == 1
