"""The `vwlogs` Python package against the `fb` command and real readers.

Run by `.ci/run`: `FB=path/to/fb pytest tests/python/test_vwlogs.py`.
Every check compares `vwlogs` with what `fb` computes for the same log
(its Arrow export, its DSJSON, its stats), so a difference in either fails.
"""

import importlib.metadata
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import pyarrow as pa
import pyarrow.ipc
import pytest

import vwlogs

sys.path.insert(0, os.path.dirname(__file__))
import check_export  # noqa: E402  (the DSJSON comparison, shared)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
FB = os.environ.get("FB", os.path.join(ROOT, "target", "debug", "fb"))


def fb(*args):
    return subprocess.run([FB, *args], check=True, capture_output=True).stdout


def corpus():
    cases = []
    for sub in ("valid_joined_logs", "invalid_joined_logs", "skip_learn/cb", "skip_learn/ccb",
                "skip_learn/ca", "skip_learn/slates", "literal_outcomes"):
        for name in sorted(os.listdir(os.path.join(DATA, sub))):
            if not name.endswith(".json"):
                cases.append(pytest.param(os.path.join(DATA, sub, name), id=f"{sub}/{name}"))
    return cases


def flags_of(log):
    return ["--multistep"] if "multistep" in os.path.basename(log) else []


def fb_export(log, flags, tmp_path):
    """`fb export --format arrow` of `log` and its exit code: a damaged log's
    rows before the damage are in `OUT.partial` (none: no file)."""
    out = tmp_path / "export.arrow"
    code = subprocess.run([FB, "export", "-q", "--force", "--format", "arrow", *flags, log,
                           "-o", str(out)], capture_output=True).returncode
    if code == 1:
        partial = tmp_path / "export.arrow.partial"
        if not partial.exists():
            return vwlogs.schema().empty_table(), code
        out = partial
    return pyarrow.ipc.open_file(str(out)).read_all(), code


@pytest.mark.parametrize("log", corpus())
def test_read_equals_the_export_and_the_dsjson(log, tmp_path):
    flags = flags_of(log)
    want, code = fb_export(log, flags, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vwlogs.SkippedEventsWarning)
        if code == 0:
            got = vwlogs.read(log, multistep=bool(flags)).read_all()
        else:
            # fb exported what came before the damage and exited 1: read()
            # yields the same rows, then raises.
            got = []
            with pytest.raises(vwlogs.LogError):
                for batch in vwlogs.read(log, multistep=bool(flags)):
                    got.append(batch)
            got = pa.Table.from_batches(got, schema=vwlogs.schema())
    assert got.schema == want.schema
    assert got.schema.metadata == want.schema.metadata
    assert got.equals(want), log
    if code == 0:
        check_export.compare(log, got, check_export.dsjson(FB, log, flags))


def test_every_consumer_takes_the_reader():
    logs = os.path.join(DATA, "valid_joined_logs")
    stats = json.loads(fb("stats", "--json", "-q", logs))
    n = stats["kept"]
    assert n > 100
    import duckdb
    import pandas
    import polars as pl

    assert pa.table(vwlogs.read(logs)).num_rows == n
    df = pl.DataFrame(vwlogs.read(logs))
    assert df.height == n
    assert pl.from_arrow(vwlogs.read(logs)).equals(df)
    assert len(vwlogs.read(logs).to_pandas()) == n
    assert isinstance(vwlogs.read(logs).to_pandas(), pandas.DataFrame)
    r = vwlogs.read(logs)
    rows = duckdb.sql(
        "SELECT problem_type, count(*) AS n, sum(reward) AS s FROM r GROUP BY problem_type"
    ).fetchall()
    by_type = stats["by_problem_type"]
    assert {k: c for k, c, _ in rows} == {k: v["events"] for k, v in by_type.items()}
    for kind, _, total in rows:
        if kind != "ccb":  # stats sums CCB rewards over every slot
            assert check_export.close(total, by_type[kind]["reward_sum"]), kind
    # Iteration gives the same rows in batches that end at a message
    # boundary once batch_rows is reached.
    batches = list(vwlogs.read(logs, batch_rows=50))
    assert len(batches) > 2
    assert pa.Table.from_batches(batches).equals(pa.table(vwlogs.read(logs)))


def test_a_reader_of_a_file_object_is_read_once():
    path = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    with open(path, "rb") as f:
        r = vwlogs.read(f)
        assert not r.rereadable
        assert pa.table(r).num_rows == 1
        with pytest.raises(RuntimeError, match="already read"):
            pa.table(r)


@pytest.mark.parametrize("kind", ["folder", "bytes", "memory url"])
def test_a_reader_of_paths_or_bytes_reads_afresh_for_each_consumer(kind):
    import duckdb
    import fsspec

    logs = os.path.join(DATA, "valid_joined_logs")
    path = os.path.join(logs, "ccb_sum_reward_100_interactions.fb")
    with open(path, "rb") as f:
        data = f.read()
    fsspec.filesystem("memory").pipe("/again/one.fb", data)
    source = {"folder": logs, "bytes": data, "memory url": "memory://again/one.fb"}[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vwlogs.SkippedEventsWarning)
        want = pa.table(vwlogs.read(source))
        r = vwlogs.read(source)
        assert r.rereadable
        # Each query takes a fresh stream (a notebook cell run again). A
        # relation object keeps the one stream DuckDB took when it was
        # made (docs/python.md).
        for _ in range(2):
            assert duckdb.sql("SELECT count(*) FROM r").fetchall() == [(want.num_rows,)]
        assert pa.table(r).equals(want)
        assert r.read_all().equals(want)
        assert pa.Table.from_batches(list(r), schema=r.schema).equals(want)
    assert r.summary["rows"] == want.num_rows > 10


def test_bytes_files_and_fsspec_give_the_same_rows():
    import fsspec

    path = os.path.join(DATA, "valid_joined_logs", "ccb_sum_reward_100_interactions.fb")
    want = pa.table(vwlogs.read(path))
    assert want.num_rows > 10
    with open(path, "rb") as f:
        data = f.read()
    assert pa.table(vwlogs.read(data)).equals(want)
    with open(path, "rb") as f:
        assert pa.table(vwlogs.read(f)).equals(want)
    fs = fsspec.filesystem("memory")
    fs.pipe("/logs/one.fb", data)
    assert pa.table(vwlogs.read("memory://logs/one.fb")).equals(want)
    with fs.open("/logs/one.fb", "rb") as f:
        assert pa.table(vwlogs.read(f)).equals(want)
    # A list is one log, in order, as fb reads several inputs.
    two = pa.table(vwlogs.read([path, data]))
    assert two.num_rows == 2 * want.num_rows


@pytest.mark.parametrize("wrap", [bytearray, memoryview], ids=["bytearray", "memoryview"])
def test_bytes_like_sources_give_the_rows_of_bytes(wrap):
    path = os.path.join(DATA, "valid_joined_logs", "ccb_sum_reward_100_interactions.fb")
    with open(path, "rb") as f:
        data = f.read()
    want = pa.table(vwlogs.read(data))
    assert want.num_rows > 10
    assert pa.table(vwlogs.read(wrap(data))).equals(want)
    assert vwlogs.stats(wrap(data)) == vwlogs.stats(data)


def test_a_url_folder_reads_its_files_and_errors_keep_the_scheme(tmp_path):
    import fsspec

    logs = os.path.join(DATA, "valid_joined_logs")
    names = ["ccb_sum_reward_100_interactions.fb", "cb_simple.log"]
    fs = fsspec.filesystem("memory")
    for name in names:
        with open(os.path.join(logs, name), "rb") as f:
            fs.pipe(f"/folder/{name}", f.read())
    fs.pipe("/folder/.hidden", b"not a log")
    # The files of the folder, sorted by name, as fb reads a local one.
    local = [os.path.join(logs, n) for n in sorted(names)]
    assert pa.table(vwlogs.read("memory://folder/")).equals(pa.table(vwlogs.read(local)))
    with pytest.raises(FileNotFoundError, match="memory://folder/missing.fb"):
        vwlogs.read("memory://folder/missing.fb")
    with open(os.path.join(DATA, "invalid_joined_logs", "bad_magic.log"), "rb") as f:
        fs.pipe("/bad/bad_magic.log", f.read())
    with pytest.raises(vwlogs.LogError) as err:
        vwlogs.read("memory://bad/").read_all()
    assert err.value.path == "memory://bad/bad_magic.log"


def regular_offsets(path):
    return [(m["offset"], m["index"]) for m in vwlogs.inspect(path) if m["type"] == "REGULAR"]


def test_a_cut_log_raises_where_it_is_cut_and_recover_reads_on(tmp_path):
    src = str(tmp_path / "whole.fb")
    fb("gen", "-q", "--problem-type", "cb", "--events", "40", "--seed", "7", "-o", src)
    regulars = regular_offsets(src)
    assert len(regulars) >= 3
    offset, index = regulars[-2]
    cut = tmp_path / "cut.fb"
    with open(src, "rb") as f:
        cut.write_bytes(f.read()[: offset + 12])
    got = []
    with pytest.raises(vwlogs.LogError) as err:
        for batch in vwlogs.read(str(cut)):
            got.append(batch)
    assert err.value.path == str(cut)
    assert err.value.offset == offset
    assert err.value.message_index == index
    assert f"byte {offset}" in str(err.value)
    # The rows before the cut came first: those fb exports of the cut log.
    want, code = fb_export(str(cut), [], tmp_path)
    assert code == 1
    assert pa.Table.from_batches(got, schema=vwlogs.schema()).equals(want)
    # pyarrow straight on the stream sees the same error text.
    with pytest.raises(Exception, match=f"byte {offset}"):
        pa.table(vwlogs.read(str(cut)))
    # recover=True salvages the rows before the cut, and says what it skipped.
    r = vwlogs.read(str(cut), recover=True)
    salvaged = r.read_all()
    assert salvaged.num_rows == want.num_rows
    assert any("skipped bytes" in d for d in r.summary["damaged_inputs"])


def test_a_file_that_is_not_a_log_raises_at_byte_zero():
    path = os.path.join(DATA, "invalid_joined_logs", "bad_magic.log")
    with pytest.raises(vwlogs.LogError) as err:
        vwlogs.read(path).read_all()
    assert (err.value.offset, err.value.message_index) == (0, 0)
    assert "fb repair" in str(err.value)


def test_skipped_events_are_counted_and_warned():
    path = os.path.join(DATA, "invalid_joined_logs", "corrupt_joined_payload.log")
    r = vwlogs.read(path)
    with pytest.warns(vwlogs.SkippedEventsWarning, match="invalid_joined_payload"):
        r.read_all()
    stats = json.loads(fb("stats", "--json", "-q", path))
    assert r.summary["skipped_by_reason"] == stats["skipped_by_reason"]


def test_skipped_events_warnings_point_at_the_callers_line(tmp_path):
    path = os.path.join(DATA, "invalid_joined_logs", "corrupt_joined_payload.log")
    calls = [
        ("read_all", lambda: vwlogs.read(path).read_all()),
        ("iteration", lambda: [b for b in vwlogs.read(path)]),
        ("to_pandas", lambda: vwlogs.read(path).to_pandas()),
        ("convert", lambda: vwlogs.convert(path, tmp_path / "out.json")),
    ]
    for what, call in calls:
        with pytest.warns(vwlogs.SkippedEventsWarning) as record:
            call()
        assert [w.filename for w in record] == [__file__], what


@pytest.mark.parametrize(
    "options, match",
    [
        pytest.param({"problem_type": "cbb"}, "problem_type", id="problem type"),
        pytest.param({"reward_function": "mean"}, "reward_function", id="reward function"),
        pytest.param({"learning_mode": "offline"}, "learning_mode", id="learning mode"),
        pytest.param({"compat": "strict"}, "compat", id="compat"),
        pytest.param({"since": "yesterday"}, "since", id="since not a time"),
        pytest.param({"since": "2021-01-02", "until": "2021-01-01"}, "since", id="empty window"),
        pytest.param({"skip_learn": "maybe"}, "skip_learn", id="skip learn"),
        pytest.param({"only": ["cb", "xyz"]}, "only", id="only"),
        pytest.param({"batch_rows": 0}, "batch_rows", id="zero batch"),
        pytest.param({"threads": 0}, "threads", id="zero threads"),
        pytest.param({"threads": 100000}, "threads", id="too many threads"),
        pytest.param({"multistep_reward": "x"}, "multistep_reward", id="multistep reward"),
        pytest.param({"batch_rows": -1}, "^batch_rows: -1 is not from 1", id="negative batch"),
        pytest.param({"batch_rows": 2**70}, "^batch_rows: ", id="huge batch"),
        pytest.param({"columns": ["reward", "rewrd"]}, "^columns: no column `rewrd`", id="unknown column"),
        pytest.param({"columns": "reward,reward"}, "chosen twice", id="column twice"),
        pytest.param({"columns": []}, "no column chosen", id="no columns"),
    ],
)
def test_bad_options_raise_value_error(options, match):
    with pytest.raises(ValueError, match=match):
        vwlogs.read(os.path.join(DATA, "valid_joined_logs", "cb_simple.log"), **options)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"since": "2021-01-02", "until": "2021-01-01"}, id="empty window"),
        pytest.param({"since": "2021-01-01", "until": "2021-01-01"}, id="one instant"),
        pytest.param({"until": "noon"}, id="until not a time"),
    ],
)
def test_option_errors_name_the_option_not_a_flag(options):
    with pytest.raises(ValueError) as err:
        vwlogs.read(os.path.join(DATA, "valid_joined_logs", "cb_simple.log"), **options)
    assert str(err.value).startswith(("since: ", "until: ")), err.value
    assert "--" not in str(err.value)


@pytest.mark.parametrize(
    "key, value",
    [
        pytest.param("multistep", "false", id="multistep string"),
        pytest.param("use_client_time", "False", id="client time string"),
        pytest.param("recover", "no", id="recover string"),
        pytest.param("inline_dedup", 1, id="inline dedup int"),
        pytest.param("skip_learn", True, id="skip learn bool"),
        pytest.param("problem_type", 1, id="problem type int"),
        pytest.param("batch_rows", "10", id="batch rows string"),
        pytest.param("batch_rows", True, id="batch rows bool"),
        pytest.param("batch_rows", 1.5, id="batch rows float"),
        pytest.param("threads", "2", id="threads string"),
        pytest.param("default_reward", "1", id="default reward string"),
        pytest.param("default_reward", False, id="default reward bool"),
        pytest.param("only", 5, id="only int"),
        pytest.param("only", ["cb", 1], id="only list with an int"),
        pytest.param("columns", 5, id="columns int"),
        pytest.param("since", 5, id="since int"),
    ],
)
def test_options_of_the_wrong_type_raise_type_error_naming_them(key, value, tmp_path):
    log = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    with pytest.raises(TypeError, match=f"^{key}: expected "):
        vwlogs.read(log, **{key: value})
    if key != "columns":
        with pytest.raises(TypeError, match=f"^{key}: expected "):
            vwlogs.stats(log, **{key: value})
        with pytest.raises(TypeError, match=f"^{key}: expected "):
            vwlogs.convert(log, tmp_path / "out.json", **{key: value})
        assert not (tmp_path / "out.json").exists()


def test_a_text_mode_file_is_refused_with_type_error():
    path = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    with open(path) as f:
        with pytest.raises(TypeError, match='source: .*cb_simple.log is open in text mode: open it with "rb"'):
            vwlogs.read(f)


def test_missing_and_unreadable_sources_raise_os_error():
    with pytest.raises(OSError):
        vwlogs.read(os.path.join(DATA, "no-such-log.fb"))
    with pytest.raises(TypeError):
        vwlogs.read(42)


def test_options_change_rows_as_fb_flags_do(tmp_path):
    log = os.path.join(DATA, "valid_joined_logs", "average_reward_100_interactions.fb")
    for kwargs, flags in [
        ({"reward_function": "max"}, ["--reward-function", "max"]),
        ({"default_reward": -3.5}, ["--default-reward", "-3.5"]),
        ({"since": "2021-01-01T00:00:30Z"}, ["--since", "2021-01-01T00:00:30Z"]),
        ({"compat": "reference"}, ["--compat", "reference"]),
        ({"only": "ccb"}, ["--only", "ccb"]),
    ]:
        want, code = fb_export(log, flags, tmp_path)
        assert code == 0
        assert pa.table(vwlogs.read(log, **kwargs)).equals(want), kwargs


@pytest.mark.parametrize(
    "columns",
    [
        pytest.param(["reward"], id="one number"),
        pytest.param("context, event_id", id="text reordered, as a string"),
        pytest.param(["slots", "outcomes", "pdf_value", "timestamp"], id="nested"),
    ],
)
@pytest.mark.filterwarnings("ignore::vwlogs.SkippedEventsWarning")
def test_columns_are_the_full_reads_columns(columns):
    full = pa.table(vwlogs.read(os.path.join(DATA, "valid_joined_logs")))
    names = [c.strip() for c in columns.split(",")] if isinstance(columns, str) else columns
    r = vwlogs.read(os.path.join(DATA, "valid_joined_logs"), columns=columns)
    assert r.schema.names == names
    assert r.schema.metadata == full.schema.metadata
    got = r.read_all()
    assert got.num_rows == full.num_rows > 100
    assert got.equals(full.select(names))


def test_convert_and_stats_refuse_columns(tmp_path):
    log = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    with pytest.raises(TypeError, match="columns"):
        vwlogs.stats(log, columns=["reward"])
    with pytest.raises(TypeError, match="columns"):
        vwlogs.convert(log, str(tmp_path / "x.json"), columns=["reward"])
    assert not (tmp_path / "x.json").exists()


def test_threads_give_the_same_rows(tmp_path):
    log = tmp_path / "ccb.fb"
    fb("gen", "-q", "--problem-type", "ccb", "--size", "2MiB", "--seed", "5", "-o", str(log))
    one = pa.table(vwlogs.read(str(log), threads=1))
    assert one.num_rows > 100
    assert pa.table(vwlogs.read(str(log), threads=2)).equals(one)


# On several threads a batch's pieces are joined by the consumer or, where
# the machine has cores for them, by lanes of their own; FB_JOIN_LANES
# chooses, so that both paths run on any machine.
@pytest.mark.parametrize("lanes", ["0", "1", "2"])
@pytest.mark.parametrize("threads", [2, 3])
def test_batches_joined_on_lanes_are_those_joined_by_the_consumer(lanes, threads, tmp_path,
                                                                 monkeypatch):
    logs = [str(tmp_path / f"{n}.fb") for n in ("one", "two")]
    for seed, log in enumerate(logs):
        fb("gen", "-q", "--problem-type", "ccb", "--size", "3MiB", "--seed", str(seed), "-o", log)
    one = list(vwlogs.read(logs, batch_rows=700, threads=1))
    monkeypatch.setenv("FB_JOIN_LANES", lanes)
    reader = vwlogs.read(logs, batch_rows=700, threads=threads)
    many = list(reader)
    assert [b.num_rows for b in many] == [b.num_rows for b in one]
    assert len(many) > 6 and all(a.equals(b) for a, b in zip(many, one))
    assert reader.summary["rows"] == sum(b.num_rows for b in one)


@pytest.mark.parametrize("lanes", ["0", "2"])
def test_a_consumer_that_stops_early_stops_the_lanes(lanes, tmp_path, monkeypatch):
    log = str(tmp_path / "ccb.fb")
    fb("gen", "-q", "--problem-type", "ccb", "--size", "4MiB", "--seed", "2", "-o", log)
    monkeypatch.setenv("FB_JOIN_LANES", lanes)

    def threads():
        return len(os.listdir("/proc/self/task"))

    before = threads()
    it = iter(vwlogs.read([log] * 50, batch_rows=100, threads=2))
    first = next(it)
    assert first.num_rows == 100 and threads() > before
    names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
    assert sum(n.startswith("fb-arrow-join") for n in names) == int(lanes), names
    del it, first
    # Every thread of the run ends: the joining ones, and the lanes.
    deadline = time.monotonic() + 10
    while threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threads() == before


def test_convert_writes_what_fb_convert_writes(tmp_path):
    logs = os.path.join(DATA, "valid_joined_logs")
    out = tmp_path / "out.dsjson"
    summary = vwlogs.convert(logs, out)
    want = fb("convert", "-q", "--threads", "1", logs)
    assert out.read_bytes() == want
    assert summary["lines"] == len(want.splitlines())
    # An output that is one of the inputs is refused, the input unchanged.
    copy = tmp_path / "cb.log"
    shutil.copy(os.path.join(logs, "cb_simple.log"), copy)
    before = copy.read_bytes()
    with pytest.raises(OSError, match="input"):
        vwlogs.convert(str(copy), copy)
    assert copy.read_bytes() == before
    # DSJSON is not written under a Parquet or Arrow name, as with fb convert.
    for name in ["x.parquet", "x.arrow"]:
        with pytest.raises(OSError, match="vwlogs.read"):
            vwlogs.convert(logs, tmp_path / name)
        assert not (tmp_path / name).exists()


def test_stats_is_fb_stats_json():
    logs = os.path.join(DATA, "valid_joined_logs")
    assert vwlogs.stats(logs) == json.loads(fb("stats", "--json", "-q", logs))
    log = os.path.join(DATA, "valid_joined_logs", "ccb_sum_reward_100_interactions.fb")
    assert vwlogs.stats(log, reward_function="min") == json.loads(
        fb("stats", "--json", "-q", "--reward-function", "min", log)
    )


@pytest.mark.parametrize("threads", [2, 4])
def test_stats_are_the_same_for_any_thread_count(threads, tmp_path):
    # Uniform rewards and pass probabilities below 1: sums whose last
    # digits depend on the order of their terms; a folder of pieces too.
    log = str(tmp_path / "ccb.fb")
    fb("gen", "-q", "--problem-type", "ccb", "--events", "4000", "--seed", "3", "--zstd",
       "--dedup", "--checkpoint-every", "5", "--reward", "uniform:-1:2",
       "--pass-probability", "0.8", "-o", log)
    pieces = str(tmp_path / "pieces")
    fb("split", "-q", log, "--max-size", "200KiB", "-o", pieces)
    assert len(os.listdir(pieces)) > 3
    for source in [log, pieces]:
        one = vwlogs.stats(source)
        many = vwlogs.stats(source, threads=threads)
        assert one["kept"] == 4000
        assert json.dumps(many) == json.dumps(one)
        assert one == json.loads(fb("stats", "--json", "-q", "--threads", str(threads), source))
    with pytest.raises(ValueError, match="threads"):
        vwlogs.stats(log, threads=0)


def test_inspect_lists_every_message():
    log = os.path.join(DATA, "valid_joined_logs", "cb_joined_with_pdrop_05.fb")
    messages = list(vwlogs.inspect(log))
    counts = {}
    for m in messages:
        counts[m["type"]] = counts.get(m["type"], 0) + 1
    assert counts == json.loads(fb("stats", "--json", "-q", log))["messages"]
    assert [m["index"] for m in messages] == list(range(len(messages)))
    offsets = [m["offset"] for m in messages]
    assert offsets == sorted(offsets) and offsets[0] == 0
    ids = [i for m in messages for i in m.get("event_ids", [])]
    table = pa.table(vwlogs.read(log))
    assert set(table.column("event_id").to_pylist()) <= set(ids)


def test_schema_is_the_documented_one():
    schema = vwlogs.schema()
    assert schema.metadata[b"fb.schema_version"] == vwlogs.SCHEMA_VERSION.encode()
    doc = open(os.path.join(ROOT, "docs", "arrow-schema.md")).read()
    for field in schema:
        assert f"`{field.name}`" in doc, field.name


def test_the_version_is_the_packages():
    assert vwlogs.__version__ == importlib.metadata.version("vwlogs")
    assert vwlogs.__version__.count(".") == 2


def damaged_log_error():
    try:
        vwlogs.stats(os.path.join(DATA, "invalid_joined_logs", "bad_magic.log"))
    except vwlogs.LogError as e:
        return e
    raise AssertionError("no LogError")


def test_log_errors_pickle_and_cross_from_worker_processes():
    err = damaged_log_error()
    assert type(err).__module__ == "vwlogs" and type(err).__qualname__ == "LogError"
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is vwlogs.LogError
    assert (str(back), back.path, back.offset, back.message_index) == (
        str(err), err.path, err.offset, err.message_index)
    path = os.path.join(DATA, "invalid_joined_logs", "bad_magic.log")
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        with pytest.raises(vwlogs.LogError) as far:
            pool.submit(vwlogs.stats, path).result()
    assert (far.value.path, far.value.offset, far.value.message_index) == (path, 0, 0)


def test_inline_dedup_is_fb_convert_inline_dedup(tmp_path):
    log = os.path.join(DATA, "valid_joined_logs", "cb_dedup_compressed.log")
    out = tmp_path / "out.json"
    vwlogs.convert(log, out, inline_dedup=True)
    assert out.read_bytes() == fb("convert", "-q", "--threads", "1", "--inline-dedup", log)
    assert out.read_bytes() != fb("convert", "-q", "--threads", "1", log)
    referring = pa.table(vwlogs.read(log)).column("context").to_pylist()
    inlined = pa.table(vwlogs.read(log, inline_dedup=True)).column("context").to_pylist()
    assert any('"__aid"' in c for c in referring)
    assert not any('"__aid"' in c for c in inlined) and len(inlined) == len(referring)
    assert vwlogs.stats(log, inline_dedup=True)["kept"] == len(inlined)


def test_batch_rows_holds_with_several_threads(tmp_path):
    logs = [str(tmp_path / f"{n}.fb") for n in ("one", "two")]
    for seed, log in enumerate(logs):
        fb("gen", "-q", "--problem-type", "ccb", "--size", "4MiB", "--seed", str(seed), "-o", log)
    # The threads join chunks of about a megabyte of log (some 1,000 CCB
    # rows here): they are cut again into batches of exactly batch_rows.
    one = list(vwlogs.read(logs, batch_rows=1500, threads=1))
    two = list(vwlogs.read(logs, batch_rows=1500, threads=2))
    assert pa.Table.from_batches(two).equals(pa.Table.from_batches(one))
    rows = [b.num_rows for b in two]
    assert rows == [b.num_rows for b in one]
    per_log = pa.table(vwlogs.read(logs[0])).num_rows
    assert sum(rows) > 4 * 1500 and per_log % 1500 != 0
    # Batches of 1,500 rows, but the last: one runs across the two logs.
    n = sum(rows)
    assert rows == [1500] * (n // 1500) + [n % 1500], rows


@pytest.mark.parametrize("threads", [1, 2])
def test_batches_are_cut_inside_a_message(threads):
    # The reference's 100 CCB decisions are one message: a batch holds
    # exactly batch_rows rows, inside it too, on any number of threads.
    log = os.path.join(DATA, "valid_joined_logs", "ccb_sum_reward_100_interactions.fb")
    rows = [b.num_rows for b in vwlogs.read(log, batch_rows=7, threads=threads)]
    assert rows == [7] * 14 + [2]


def batch_ends(batches):
    """The cumulative row count at the end of each batch."""
    end, ends = 0, []
    for b in batches:
        end += b.num_rows
        ends.append(end)
    return ends


def several_sources(tmp_path):
    """Logs of several sizes (one of about three chunks of the threads),
    and each one's cumulative row count read as one list."""
    logs = []
    for n, (kind, size) in enumerate([("cb", "300"), ("ccb", "2MiB"), ("cb", "1"), ("ccb", "120"),
                                      ("cb", "3MiB")]):
        log = str(tmp_path / f"{n}.fb")
        amount = ["--size", size] if size.endswith("MiB") else ["--events", size]
        fb("gen", "-q", "--problem-type", kind, *amount, "--seed", str(n), "-o", log)
        logs.append(log)
    ends, end = [], 0
    for log in logs:
        end += pa.table(vwlogs.read(log)).num_rows
        ends.append(end)
    return logs, ends


@pytest.mark.parametrize("threads", [1, 3])
def test_several_sources_on_threads_give_the_rows_in_batches_across_them(threads, tmp_path):
    logs, source_ends = several_sources(tmp_path)
    assert source_ends[-1] > 4000 and len(set(source_ends)) == len(logs), source_ends
    want = pa.table(vwlogs.read(logs, threads=1, batch_rows=1 << 20))
    assert want.num_rows == source_ends[-1]
    batches = list(vwlogs.read(logs, threads=threads, batch_rows=100))
    assert pa.Table.from_batches(batches).equals(want)
    ends = batch_ends(batches)
    # Batches run across the sources, whatever the number of threads: a
    # batch holds exactly batch_rows rows, but the last.
    assert ends == list(range(100, want.num_rows, 100)) + [want.num_rows], ends
    assert not set(source_ends[:-1]) <= set(ends), (source_ends, ends)


def test_a_cut_source_among_several_on_threads_hands_out_the_rows_before_it(tmp_path):
    logs, source_ends = several_sources(tmp_path)
    src = logs[3]
    offset, index = regular_offsets(src)[-2]
    cut = tmp_path / "cut.fb"
    with open(src, "rb") as f:
        cut.write_bytes(f.read()[: offset + 12])
    logs[3] = str(cut)
    runs = {}
    for threads in (1, 3):
        got = []
        with pytest.raises(vwlogs.LogError) as err:
            for batch in vwlogs.read(logs, threads=threads, batch_rows=100):
                got.append(batch)
        # The error names the cut source, where it is cut.
        assert (err.value.path, err.value.offset) == (str(cut), offset), threads
        assert err.value.message_index == index
        # Full batches, across the sources, but the last.
        assert all(b.num_rows == 100 for b in got[:-1]), (threads, batch_ends(got))
        runs[threads] = pa.Table.from_batches(got, schema=vwlogs.schema())
    # The rows before the cut came first, the same for any threads: those
    # of the sources before it, and of the cut one before the cut.
    assert runs[3].equals(runs[1])
    assert source_ends[2] < runs[1].num_rows < source_ends[3]


def test_a_reader_reads_nothing_until_used(tmp_path):
    log = str(tmp_path / "cb.fb")
    fb("gen", "-q", "--problem-type", "cb", "--events", "200", "--seed", "1", "-o", log)

    def threads():
        return len(os.listdir("/proc/self/task"))

    before = threads()
    # One row per batch: a started reader would hold its thread, waiting
    # for the consumer to take a batch.
    readers = [vwlogs.read(log, batch_rows=1) for _ in range(5)]
    time.sleep(0.3)
    assert threads() == before
    assert all(r.summary == {"rows": 0} for r in readers)
    it = iter(readers[0])
    next(it)
    assert threads() > before
    assert sum(b.num_rows for b in it) == 199


# Ctrl-C: `_thread.interrupt_main` 0.5 s into a call that would run for
# about ten seconds; KeyboardInterrupt must come within INTERRUPT_BOUND s.
INTERRUPT_SCRIPT = textwrap.dedent("""
    import _thread, json, sys, threading, time, warnings
    import polars as pl, pyarrow as pa, vwlogs
    warnings.simplefilter("ignore")
    log, copies, op, out, warm_up = sys.argv[1:6]
    def calls(paths, out):
        files = lambda: [open(p, "rb") for p in paths]
        return {
            "convert": lambda: vwlogs.convert(paths, out),
            "convert file objects": lambda: vwlogs.convert(files(), out),
            "convert two threads": lambda: vwlogs.convert(paths, out, threads=2),
            "stats": lambda: vwlogs.stats(paths),
            "stats recover": lambda: vwlogs.stats(paths, recover=True),
            "read_all": lambda: vwlogs.read(paths).read_all(),
            "read_all recover": lambda: vwlogs.read(paths, recover=True).read_all(),
            "read_all file objects": lambda: vwlogs.read(files()).read_all(),
            "read_all two threads": lambda: vwlogs.read(paths, threads=2).read_all(),
            "read_all join lanes": lambda: vwlogs.read(paths, threads=3).read_all(),
            "iteration": lambda: sum(b.num_rows for b in vwlogs.read(paths)),
            "pa.table": lambda: pa.table(vwlogs.read(paths)),
            "pl.DataFrame": lambda: pl.DataFrame(vwlogs.read(paths)),
        }[op]
    # The first call imports what it uses (pandas, for pyarrow): an
    # interrupt must not land there.
    calls([warm_up], "/dev/null")()
    call = calls([log] * int(copies), out)
    fired = []
    def fire():
        fired.append(time.monotonic())
        _thread.interrupt_main()
    threading.Timer(0.5, fire).start()
    try:
        call()
        outcome = "returned"
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    print(json.dumps({"outcome": outcome, "after": time.monotonic() - fired[0]}))
""")
INTERRUPT_BOUND = 2.0
INTERRUPT_OPS = ["convert", "convert file objects", "convert two threads", "stats", "stats recover",
                 "read_all", "read_all recover", "read_all file objects", "read_all two threads",
                 "read_all join lanes",
                 "iteration", "pa.table", "pl.DataFrame"]


@pytest.fixture(scope="module")
def long_log(tmp_path_factory):
    """A log, and how many copies of it in a row `stats` (the fastest
    call) takes about ten seconds over."""
    log = str(tmp_path_factory.mktemp("long") / "cb.fb")
    fb("gen", "-q", "--problem-type", "cb", "--size", "8MiB", "--seed", "3", "-o", log)
    started = time.monotonic()
    vwlogs.stats([log, log])
    per_copy = (time.monotonic() - started) / 2
    return log, max(4, min(400, int(10 / per_copy)))


@pytest.mark.parametrize("op", INTERRUPT_OPS)
def test_ctrl_c_stops_every_call_at_once(long_log, op, tmp_path):
    log, copies = long_log
    out = tmp_path / "out.json"
    out.write_text("the old output\n")
    warm_up = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    env = dict(os.environ, FB_JOIN_LANES="2") if "lanes" in op else None
    run = subprocess.run([sys.executable, "-c", INTERRUPT_SCRIPT, log, str(copies), op, str(out), warm_up],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["outcome"] == "KeyboardInterrupt", got
    assert got["after"] < INTERRUPT_BOUND, got
    # An interrupted convert leaves the old output, and no temporary file.
    assert out.read_text() == "the old output\n"
    assert os.listdir(tmp_path) == ["out.json"]


# --- Spark ---------------------------------------------------------------


@pytest.fixture(scope="module")
def spark():
    pyspark = pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("vwlogs-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    from vwlogs.spark import JoinedLogs

    session.dataSource.register(JoinedLogs)
    assert pyspark.__version__.startswith("4.")
    yield session
    session.stop()


def spark_folder(tmp_path_factory, multistep):
    folder = tmp_path_factory.mktemp("multistep" if multistep else "logs")
    src = os.path.join(DATA, "valid_joined_logs")
    for name in sorted(os.listdir(src)):
        if name.endswith(".json") or ("multistep" in name) != multistep:
            continue
        shutil.copy(os.path.join(src, name), folder / name)
    kinds = ["multistep"] if multistep else ["cb", "ccb", "slates", "ca"]
    sub = folder / "generated"
    sub.mkdir()
    for seed, kind in enumerate(kinds):
        fb("gen", "-q", "--problem-type", kind, "--size", "1MiB", "--seed", str(seed),
           "-o", str(sub / f"{kind}.fb"))
    return folder


@pytest.mark.parametrize("multistep", [False, True], ids=["logs", "multistep"])
def test_spark_reads_a_folder_as_fb_stats_counts_it(spark, tmp_path_factory, multistep):
    folder = spark_folder(tmp_path_factory, multistep)
    files = [os.path.join(r, f) for r, _, fs in os.walk(folder) for f in fs]
    reader = spark.read.format("vwlogs")
    if multistep:
        reader = reader.option("multistep", "true")
    df = reader.load(str(folder))
    # One task per file.
    assert df.rdd.getNumPartitions() == len(files) > 1
    from pyspark.sql import functions as F

    row = df.agg(
        F.count("*").alias("n"),
        F.countDistinct("event_id").alias("ids"),
        F.sum(F.when(F.col("problem_type") != "ccb", F.col("reward"))).alias("reward"),
    ).collect()[0]
    flags = ["--multistep"] if multistep else []
    # Each file is a log of its own to Spark (as to `fb stats FILE`): a
    # file without a checkpoint does not take the one before it.
    kept, reward, ids = 0, 0.0, set()
    for f in sorted(files):
        stats = json.loads(fb("stats", "--json", "-q", *flags, f))
        kept += stats["kept"]
        reward += sum(v["reward_sum"] for k, v in stats["by_problem_type"].items() if k != "ccb")
        ids |= set(pa.table(vwlogs.read(f, multistep=multistep)).column("event_id").to_pylist())
    assert kept > 100
    assert row["n"] == kept
    assert check_export.close(row["reward"], reward), (row["reward"], reward)
    assert row["ids"] == len(ids)


def test_spark_reads_the_columns_of_a_given_schema(spark, tmp_path_factory):
    folder = spark_folder(tmp_path_factory, False)
    full = spark.read.format("vwlogs").load(str(folder))
    # Wider types (double, array<bigint>), nullability relaxed, another order.
    schema = "reward double, event_id string, timestamp timestamp, baseline_actions array<bigint>, " \
        "outcomes " + full.schema["outcomes"].dataType.simpleString()
    narrow = spark.read.format("vwlogs").schema(schema).load(str(folder))
    assert narrow.columns == ["reward", "event_id", "timestamp", "baseline_actions", "outcomes"]
    assert narrow.schema["reward"].dataType.typeName() == "double"
    cols = ["event_id", "timestamp", "reward", "outcomes", "baseline_actions"]
    want = sorted(tuple(r) for r in full.select(*cols).collect())
    got = sorted(tuple(r) for r in narrow.select(*cols).collect())
    assert len(got) == len(want) > 100
    assert any(w[4] for w in want)
    for g, w in zip(got, want):
        assert g[:2] == w[:2] and g[3:] == w[3:]
        assert check_export.close(g[2], w[2]), (g, w)


@pytest.mark.parametrize(
    "schema, match",
    [
        pytest.param("reward float, rewards float", "column 'rewards'", id="unknown column"),
        pytest.param("reward float, event_id array<int>", "does not convert", id="wrong type"),
        pytest.param("problem_type int", "'problem_type' is string, which does not convert to int32",
                     id="text to number"),
        pytest.param("reward int", "'reward' is float, which does not convert", id="float to int"),
        pytest.param("chosen_action float", "'chosen_action' is int64, which does not convert",
                     id="int64 to float"),
        pytest.param("client_time timestamp not null", "'client_time'.*has nulls", id="nulls"),
    ],
)
def test_spark_schemas_are_checked_on_the_driver(spark, schema, match):
    from pyspark.errors import AnalysisException

    # AnalysisException: planning on the driver refused it; a task's
    # failure would be a SparkException.
    with pytest.raises(AnalysisException, match=match):
        spark.read.format("vwlogs").schema(schema).load(DATA).count()


@pytest.mark.parametrize(
    "option, value, match",
    [
        pytest.param("problemTipe", "cb", "unknown option", id="unknown"),
        pytest.param("rewardFunction", "maximum", "reward_function: `maximum` is not one of",
                     id="reward function"),
        pytest.param("problemType", "cbb", "problem_type: `cbb` is not one of", id="problem type"),
        pytest.param("since", "yesterday", "since: `yesterday` is not a time", id="since"),
        pytest.param("batchRows", "0", "batch_rows: 0 is not from 1", id="zero batch rows"),
        pytest.param("batchRows", "many", "batch_rows: expected a number", id="batch rows text"),
        pytest.param("multistep", "maybe", "multistep: expected true or false", id="multistep"),
    ],
)
def test_spark_options_are_checked_on_the_driver(spark, option, value, match):
    from pyspark.errors import AnalysisException

    log = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    with pytest.raises(AnalysisException, match=match):
        spark.read.format("vwlogs").option(option, value).load(log).count()


def test_spark_loads_a_list_of_paths(spark):
    logs = [os.path.join(DATA, "valid_joined_logs", n)
            for n in ("ccb_sum_reward_100_interactions.fb", "cb_simple.log")]
    df = spark.read.format("vwlogs").load(logs)
    assert df.rdd.getNumPartitions() == 2
    kept = sum(json.loads(fb("stats", "--json", "-q", log))["kept"] for log in logs)
    assert df.count() == kept > 100


@pytest.mark.parametrize("partition", ["none", "date"])
def test_spark_reads_fb_export_parquet(spark, tmp_path, partition):
    logs = os.path.join(DATA, "valid_joined_logs")
    out = tmp_path / "events"
    fb("export", "-q", "--partition-by", partition, logs, "-o", str(out) + (".parquet" if partition == "none" else ""))
    path = str(out) + (".parquet" if partition == "none" else "")
    df = spark.read.parquet(path)
    from pyspark.sql import functions as F

    row = df.agg(
        F.count("*").alias("n"),
        F.sum(F.when(F.col("problem_type") != "ccb", F.col("reward"))).alias("reward"),
        F.sum(F.size("outcomes")).alias("outcomes"),
    ).collect()[0]
    stats = json.loads(fb("stats", "--json", "-q", logs))
    assert row["n"] == stats["kept"]
    want = sum(v["reward_sum"] for k, v in stats["by_problem_type"].items() if k != "ccb")
    assert check_export.close(row["reward"], want)
    table = pa.table(vwlogs.read(logs))
    assert row["outcomes"] == sum(len(o) for o in table.column("outcomes").to_pylist())
    if partition == "date":
        assert "date" in df.columns and df.select("date").distinct().count() > 1


def test_unknown_options_are_refused_everywhere():
    log = os.path.join(DATA, "valid_joined_logs", "cb_simple.log")
    for call in (
        lambda: vwlogs.stats(log, problemtype="cb"),
        lambda: vwlogs.convert(log, "/dev/null", problemtype="cb"),
    ):
        with pytest.raises(TypeError, match="problemtype"):
            call()
    with pytest.raises(TypeError):
        vwlogs.read(log, problemtype="cb")
