"""Rules `vwlogs` keeps as `fb` does (`crates/fb-cli/tests/rules.rs`): a
call that ends in error never replaces the file it writes; a reward must
be a finite number.

Run by `.ci/run` with `FB=path/to/fb`, beside `test_vwlogs.py`.
"""

import os
import subprocess

import pytest

import vwlogs

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FB = os.environ.get("FB", os.path.join(ROOT, "target", "debug", "fb"))


@pytest.fixture
def cut_log(tmp_path):
    """A generated log cut at 60%: lines before the cut, then damage."""
    whole = tmp_path / "whole.fb"
    subprocess.run([FB, "gen", "-q", "--events", "300", "--seed", "1", "-o", str(whole)],
                   check=True)
    data = whole.read_bytes()
    cut = tmp_path / "cut.fb"
    cut.write_bytes(data[: len(data) * 6 // 10])
    return cut


@pytest.mark.parametrize("existed", [True, False], ids=["old output", "no output"])
def test_a_damaged_input_never_replaces_the_output(tmp_path, cut_log, existed):
    out = tmp_path / "out.dsjson"
    if existed:
        out.write_bytes(b"the old output\n")
    with pytest.raises(vwlogs.LogError):
        vwlogs.convert(str(cut_log), out)
    if existed:
        assert out.read_bytes() == b"the old output\n"
    else:
        assert not out.exists()
    # What was read before the damage is kept aside, as fb convert keeps it.
    want = subprocess.run([FB, "convert", "-q", str(cut_log)], capture_output=True)
    assert want.returncode == 1
    partial = tmp_path / "out.dsjson.partial"
    assert partial.read_bytes() == want.stdout
    assert len(want.stdout.splitlines()) > 10


def test_recover_puts_the_salvage_in_place(tmp_path, cut_log):
    out = tmp_path / "out.dsjson"
    out.write_bytes(b"the old output\n")
    vwlogs.convert(str(cut_log), out, recover=True)
    want = subprocess.run([FB, "convert", "-q", "--recover", str(cut_log)], capture_output=True)
    assert out.read_bytes() == want.stdout
    assert not (tmp_path / "out.dsjson.partial").exists()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e39],
                         ids=["nan", "inf", "-inf", "past float32"])
def test_a_reward_must_be_finite(value):
    log = os.path.join(ROOT, "tests", "data", "valid_joined_logs", "cb_simple.log")
    with pytest.raises(ValueError, match="default_reward.*finite"):
        vwlogs.read(log, default_reward=value)
    assert vwlogs.read(log, default_reward=-1.5).read_all().num_rows == 1
