"""`vwlogs.report` against `fb report` and `fb stats --json` (issue 41).

Run by `.ci/run`: `FB=path/to/fb pytest tests/python/test_vwlogs_report.py`.
"""

import html
import json
import os
import re
import subprocess

import pytest

import vwlogs

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
FB = os.environ.get("FB", os.path.join(ROOT, "target", "debug", "fb"))


def fb(*args):
    return subprocess.run([FB, *args], check=True, capture_output=True).stdout


def at(value, path):
    # The page names only figures that exist: an interval one decision
    # does not give is one null figure, never two null ends (a path below
    # a null raises here).
    for key in path.split("."):
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


@pytest.mark.parametrize(
    "log",
    [
        pytest.param(os.path.join(DATA, "valid_joined_logs"), id="corpus folder"),
        pytest.param(os.path.join(DATA, "valid_joined_logs", "cb_simple.log"), id="single event"),
        pytest.param(
            os.path.join(DATA, "valid_joined_logs", "ccb_sum_reward_100_interactions.fb"), id="ccb"
        ),
    ],
)
def test_report_is_fb_report(log, tmp_path):
    r = vwlogs.report(log)
    assert r.stats == json.loads(fb("stats", "--json", "-q", log))
    page = tmp_path / "page.html"
    fb("report", "-q", "-o", str(page), log)
    assert r.html == page.read_text(encoding="utf-8")
    # The same page on several threads (the sums added in log order).
    assert vwlogs.report(log, threads=3).html == r.html
    figures = re.findall(r'data-stat="([^"]*)" data-value="([^"]*)"', r.html)
    assert len(figures) >= 10
    for path, value in figures:
        assert json.loads(html.unescape(value)) == at(r.stats, path), path


def test_report_shows_inline_and_saves(tmp_path):
    log = os.path.join(DATA, "valid_joined_logs", "average_reward_100_interactions.fb")
    r = vwlogs.report(log, join_window=1.0, since="2000-01-01")
    shown = r._repr_html_()
    assert shown.startswith("<iframe") and "srcdoc=" in shown
    assert html.unescape(shown.split('srcdoc="', 1)[1].rsplit('"', 1)[0]) == r.html
    assert "Join window: 1 s" in r.html
    out = tmp_path / "r.html"
    r.save(out)
    assert out.read_text(encoding="utf-8") == r.html
    assert os.listdir(tmp_path) == ["r.html"]


def test_report_says_what_is_missing():
    log = os.path.join(DATA, "valid_joined_logs", "average_reward_100_interactions.fb")
    r = vwlogs.report(log, since="2100-01-01")
    assert r.stats["kept"] == 0
    assert "No decision was kept: nothing to show over time." in r.html


def test_report_raises_on_damage_unless_recover(tmp_path):
    whole = open(os.path.join(DATA, "valid_joined_logs", "average_reward_100_interactions.fb"), "rb").read()
    cut = tmp_path / "cut.fb"
    cut.write_bytes(whole[:-300])
    with pytest.raises(vwlogs.LogError) as err:
        vwlogs.report(str(cut))
    assert err.value.offset == 1040
    r = vwlogs.report(str(cut), recover=True)
    assert r.stats == json.loads(
        subprocess.run([FB, "stats", "--json", "-q", "--recover", str(cut)], capture_output=True).stdout
    )
    assert "Loop health" in r.html


def test_report_refuses_bad_options():
    log = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    with pytest.raises(TypeError):
        vwlogs.report(log, columns=["event_id"])
    with pytest.raises(ValueError):
        vwlogs.report(log, join_window=-1.0)


@pytest.mark.parametrize(
    "log,flags",
    [
        pytest.param(os.path.join(DATA, "valid_joined_logs", "cb_joined_with_pdrop_05.fb"), [], id="cb"),
        pytest.param(
            os.path.join(DATA, "valid_joined_logs", "ccb_sum_reward_100_interactions.fb"), [], id="ccb"
        ),
    ],
)
def test_report_policies_are_evaluate_figures(log, flags, tmp_path):
    policies = ["uniform", "baseline"]
    r = vwlogs.report(log, policy=policies)
    page = tmp_path / "page.html"
    fb("report", "-q", "--policy", "uniform", "--policy", "baseline", "-o", str(page), *flags, log)
    assert r.html == page.read_text(encoding="utf-8")
    # The same page on several threads, with policies too.
    assert vwlogs.report(log, policy=policies, threads=3).html == r.html
    by = re.search(r'data-eval-by="(\w+)"', r.html).group(1)
    evaluated = json.loads(
        fb("evaluate", "--json", "--by", by, "--policy", "uniform", "--policy", "baseline", *flags, log)
    )
    figures = re.findall(r'data-eval="([^"]*)" data-value="([^"]*)"', r.html)
    assert len(figures) >= 6
    for path, value in figures:
        assert json.loads(html.unescape(value)) == at(evaluated, path), path
    # One policy given as a name, as evaluate() takes it.
    assert "data-eval" in vwlogs.report(log, policy="uniform").html
    assert "data-eval" not in vwlogs.report(log).html


def test_report_refuses_a_policy_that_is_not_one():
    log = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    with pytest.raises(ValueError):
        vwlogs.report(log, policy="nobody")
    with pytest.raises(TypeError):
        vwlogs.report(log, policy=[len])
