"""Vowpal Wabbit joined binary logs (schema v2), read by the same Rust code
as the ``fb`` command.

- :func:`read` gives the joined events as Arrow record batches, through the
  Arrow PyCapsule interface: ``pyarrow.table(r)``, ``polars.DataFrame(r)``
  and ``duckdb.sql("select ... from r")`` take them without a copy (for
  pandas, ``r.to_pandas()``: ``pandas.DataFrame(r)`` makes a column of
  batches).
- :func:`convert` writes DSJSON, as ``fb convert`` does.
- :func:`stats` returns what ``fb stats --json`` prints.
- :func:`report` makes the ``fb report`` page (a loop's health), shown
  inline in Jupyter.
- :func:`inspect` lists the messages of a log.
- :mod:`vwlogs.spark` is a Spark data source (``format("vwlogs")``).

The columns are documented in ``docs/arrow-schema.md`` (version
:data:`SCHEMA_VERSION`). Damaged input raises :class:`LogError`, which says
where (``.path``, ``.offset``, ``.message_index``); ``recover=True`` reads on
past damage, as ``fb convert --recover`` does. Ctrl-C stops every call within
a fraction of a second (``KeyboardInterrupt``).

Example::

    import vwlogs, pyarrow as pa
    table = pa.table(vwlogs.read("logs/2026-11-23/", problem_type="cb"))
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from inspect import signature as _signature
from datetime import date, datetime, timezone
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from . import _native

__all__ = [
    "__version__",
    "LogError",
    "SkippedEventsWarning",
    "Reader",
    "SCHEMA_VERSION",
    "convert",
    "evaluate",
    "inspect",
    "Report",
    "read",
    "report",
    "schema",
    "stats",
]

LogError = _native.LogError
__version__: str = _native.__version__
SCHEMA_VERSION: str = _native.SCHEMA_VERSION


class SkippedEventsWarning(UserWarning):
    """Events were skipped (damaged payloads, outcomes without their
    decision, ...): ``Reader.summary["skipped_by_reason"]`` counts them,
    as ``fb stats`` does."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _outside_level() -> int:
    """The ``stacklevel`` of the first frame outside this package, for a
    warning issued by the caller of this function: warnings point at the
    user's line, whatever path inside the package led to them."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back
        level += 1
    return level


def _warn_skipped(summary: Dict[str, Any]) -> None:
    skipped = summary.get("skipped_by_reason") or {}
    if skipped:
        text = ", ".join(f"{n} {k}" for k, n in sorted(skipped.items()))
        warnings.warn(f"vwlogs: events skipped: {text}", SkippedEventsWarning, stacklevel=_outside_level())


def _time(key: str, value: Any) -> Optional[str]:
    """A ``since``/``until`` value as the text ``fb`` takes: a string as it
    is, a ``datetime`` in ISO form (naive ones are UTC), a ``date`` too."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{key}: expected a string, datetime or date, not {type(value).__name__}")


def _names(key: str, value: Any) -> Optional[List[Any]]:
    """A list option (``only``, ``columns``): a list or tuple, or a
    comma-separated string. Rust checks the items."""
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise TypeError(f"{key}: expected a list of strings or a comma-separated string, not {type(value).__name__}")


def _options(**given: Any) -> Dict[str, Any]:
    """The options dict for Rust: :func:`read`'s keyword arguments (its
    signature is the one list of them, with their defaults), normalized.
    Rust checks every value's type and range (:func:`_checked_options`)."""
    params = {
        name: p.default
        for name, p in _signature(read).parameters.items()
        if p.kind is p.KEYWORD_ONLY
    }
    unknown = sorted(set(given) - set(params))
    if unknown:
        raise TypeError(
            f"unexpected option {', '.join(unknown)}; the options are {', '.join(params)}"
        )
    opts = {**params, **given}
    for key in ("only", "columns"):
        opts[key] = _names(key, opts[key])
    for key in ("since", "until"):
        opts[key] = _time(key, opts[key])
    return opts


def _checked_options(**given: Any) -> Dict[str, Any]:
    """:func:`_options`, with every value checked as :func:`read` checks
    it (raises ``TypeError`` or ``ValueError`` naming the option)."""
    opts = _options(**given)
    _native.check_options(opts)
    return opts


def _whole_rows(what: str, options: Dict[str, Any]) -> None:
    if options.get("columns") is not None:
        raise TypeError(f"{what}() works on whole events: columns= is an option of read()")


_BYTES_LIKE = (bytes, bytearray, memoryview)


def _has_scheme(source: Any) -> bool:
    return isinstance(source, str) and "://" in source and not source.startswith("file://")


class _UrlFile:
    """One file of a URL, opened at its first read; its URL (``path``)
    names it in errors."""

    def __init__(self, fs: Any, path: str, url: str) -> None:
        self._fs = fs
        self._path = path
        self._file: Any = None
        self.path = url

    def read(self, n: int = -1) -> bytes:
        if self._file is None:
            self._file = self._fs.open(self._path, "rb")
        return self._file.read(n)

    def __del__(self) -> None:
        if self._file is not None:
            self._file.close()


def _open_url(url: str) -> Any:
    """A URL's file, or a folder's files (sorted, not recursive, hidden
    ones left out, as ``fb`` reads a local folder), through fsspec."""
    try:
        import fsspec
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ValueError(f"{url}: a path with a scheme needs fsspec (pip install fsspec)") from e
    fs, path = fsspec.core.url_to_fs(url)
    if fs.isdir(path):
        files = []
        for entry in fs.ls(path, detail=True):
            name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
            if entry.get("type") == "file" and not name.startswith("."):
                files.append((name, entry["name"]))
        if not files:
            raise FileNotFoundError(f"{url}: the directory holds no files")
        base = url.rstrip("/")
        return [_UrlFile(fs, p, f"{base}/{name}") for name, p in sorted(files)]
    if not fs.exists(path):
        raise FileNotFoundError(f"{url}: no such file or directory")
    return _UrlFile(fs, path, url)


def _source(source: Any) -> Any:
    """What Rust reads: paths with a scheme (``s3://``, ``abfss://``,
    ``memory://``) opened with fsspec (a folder gives its files),
    bytes-like objects as ``bytes``; everything else as it is."""
    if isinstance(source, (list, tuple)):
        out: List[Any] = []
        for s in source:
            got = _source(s)
            out.extend(got) if isinstance(got, list) else out.append(got)
        return out
    if isinstance(source, (bytearray, memoryview)):
        return bytes(source)
    if _has_scheme(source):
        return _open_url(source)
    if isinstance(source, str) and source.startswith("file://"):
        return source[len("file://") :]
    if isinstance(source, os.PathLike):
        return os.fspath(source)
    return source


def _rereadable(source: Any) -> bool:
    """Whether :func:`read` can start over on `source`: paths, URLs and
    bytes can; a file object is read once."""
    if isinstance(source, (list, tuple)):
        return all(_rereadable(s) for s in source)
    return isinstance(source, (str, os.PathLike) + _BYTES_LIKE)


class _OwnStream:
    """The native stream as the Reader's own methods take it: they raise
    an interrupt's exception themselves."""

    def __init__(self, native: Any) -> None:
        self._native = native

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._native.own_stream()


class Reader:
    """The joined events of one :func:`read` call, as a stream of Arrow
    record batches (schema: :func:`schema`).

    It implements ``__arrow_c_stream__``: pyarrow, Polars and DuckDB read it
    without a copy. Nothing is read until a consumer asks for the stream.
    When the source is paths, URLs or bytes (:attr:`rereadable`), each
    consumer that asks gets a fresh read from the start (a DuckDB relation
    can run twice); a file object is read once. Iterate it, or call
    :meth:`read_all` or :meth:`to_pandas`. After a read, :attr:`summary`
    says what it read (rows, messages, damaged inputs).
    """

    def __init__(self, source: Any, options: Dict[str, Any]) -> None:
        self._source = source
        self._options = options
        self._rereadable = _rereadable(source)
        # Checks the options and sources now; reads nothing.
        self._native = _native.read(_source(source), options)
        self._fresh = True

    def _take(self) -> Any:
        """The native reader of the next pass."""
        if not self._fresh and self._rereadable:
            self._native = _native.read(_source(self._source), self._options)
        self._fresh = False
        return self._native

    @property
    def rereadable(self) -> bool:
        """Whether every pass reads from the start (paths, URLs, bytes),
        rather than only the first (a file object)."""
        return self._rereadable

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._take().__arrow_c_stream__(requested_schema)

    def __arrow_c_schema__(self) -> Any:
        return self._native.__arrow_c_schema__()

    @property
    def schema(self) -> Any:
        """The Arrow schema (a ``pyarrow.Schema``)."""
        import pyarrow as pa

        return pa.schema(self._native)

    def _reader(self) -> Any:
        import pyarrow as pa

        native = self._take()
        return native, pa.RecordBatchReader.from_stream(_OwnStream(native))

    @staticmethod
    def _raise(native: Any, cause: Optional[BaseException]) -> None:
        err = _native.reader_error(native)
        if err is not None:
            # An interrupt (KeyboardInterrupt) is itself, not a
            # consequence of the stream's error.
            raise err from (cause if isinstance(err, Exception) else None)
        if cause is not None:
            raise cause
        _warn_skipped(_native.reader_summary(native))

    def __iter__(self) -> Iterator[Any]:
        """Yields ``pyarrow.RecordBatch`` objects; raises :class:`LogError`
        at damage, after the rows read before it."""
        native, reader = self._reader()
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except Exception as e:  # the stream's error: ours, typed
                self._raise(native, e)
            yield batch
        self._raise(native, None)

    def read_all(self) -> Any:
        """All rows as one ``pyarrow.Table``."""
        native, reader = self._reader()
        try:
            table = reader.read_all()
        except Exception as e:
            self._raise(native, e)
        self._raise(native, None)
        return table

    def to_pandas(self, **kwargs: Any) -> Any:
        """All rows as a ``pandas.DataFrame`` (needs pandas and pyarrow)."""
        return self.read_all().to_pandas(**kwargs)

    @property
    def summary(self) -> Dict[str, Any]:
        """What the last read read so far: ``rows``, and once the stream
        ended ``logs``, ``bytes``, ``messages`` per type and
        ``damaged_inputs`` (with ``recover=True``, the skipped byte
        ranges)."""
        return _native.reader_summary(self._native)

    def __repr__(self) -> str:
        if self._fresh:
            state = "unread"
        elif self._rereadable:
            state = "re-readable"
        else:
            state = "consumed"
        return f"<vwlogs.Reader {state}>"


def read(
    source: Any,
    *,
    problem_type: Optional[str] = None,
    reward_function: Optional[str] = None,
    default_reward: Optional[float] = None,
    learning_mode: Optional[str] = None,
    use_client_time: bool = False,
    multistep: bool = False,
    multistep_reward: str = "suffix_mean",
    compat: str = "sane",
    since: Any = None,
    until: Any = None,
    skip_learn: str = "include",
    only: Any = None,
    inline_dedup: bool = False,
    recover: bool = False,
    batch_rows: int = 65536,
    threads: int = 1,
    columns: Any = None,
) -> Reader:
    """Reads joined logs as Arrow record batches: one row per joined event,
    with the rewards ``fb convert`` computes.

    :param source: a path, a folder (its files, sorted, not recursive), a
        list of them (read as one log, in order), ``bytes`` (or a
        ``bytearray``, ``memoryview``), a binary file object
        (``open(p, "rb")``, fsspec files), or a URL with a scheme
        (``s3://...``, ``memory://...``, a folder too; needs fsspec).
    :param problem_type: ``cb``, ``ccb``, ``slates``, ``ca``, ... for every
        checkpoint (as ``--problem-type``).
    :param reward_function: ``earliest``, ``average``, ``median``, ``sum``,
        ``min`` or ``max``, for every checkpoint.
    :param default_reward: reward of a decision without outcomes.
    :param learning_mode: ``online``, ``apprentice`` or ``loggingonly``.
    :param use_client_time: use client timestamps instead of enqueued ones.
    :param multistep: join multistep episodes (``multistep_reward`` says
        how per-step rewards are transformed).
    :param compat: ``sane`` (default) or ``reference`` (the reference's
        quirks, exactly).
    :param since, until: only events at or after / before this time (a
        string such as ``2021-05-18T13:28:29Z``, a ``datetime`` or a
        ``date``; naive ones are UTC).
    :param skip_learn: ``include`` or ``exclude`` deferred events that were
        never activated.
    :param only: problem types to keep (list, or comma-separated string).
    :param inline_dedup: replace the ``{"__aid":N}`` action references of
        contexts with the actions they stand for (``fb convert
        --inline-dedup``), so that each context stands alone.
    :param recover: read on past damage; each input is then read whole
        into memory.
    :param batch_rows: rows per record batch: a batch holds exactly this
        many rows, on any number of ``threads``, but the last (batches run
        across inputs; one ends early only where its texts or lists would
        pass 1 GiB).
    :param threads: joining threads (the rows are the same, in the same
        order, for any number); several sources are one run, whose threads
        start once.
    :param columns: only these columns, in this order (a list, or a
        comma-separated string): the others are not built, which makes a
        narrow read much faster (the context alone is half of the bytes).

    Boolean options take ``True`` or ``False`` only, numbers ``int`` (and
    ``float`` for ``default_reward``), the rest strings.

    :raises LogError: at damage (after yielding the rows before it), unless
        ``recover``.
    :raises TypeError: for an option of the wrong type, naming it.
    :raises ValueError: for a bad option value, naming it.
    :raises OSError: when an input cannot be found or read.
    """
    given = {name: value for name, value in locals().items() if name != "source"}
    return Reader(source, _options(**given))


def convert(source: Any, out: Any, **options: Any) -> Dict[str, Any]:
    """Writes DSJSON to the path ``out`` (``.gz``/``.zst`` compress), as
    ``fb convert`` does: the file appears complete or not at all (Ctrl-C
    leaves the old file, and no temporary one), and an output that is one
    of the inputs is refused. Takes :func:`read`'s options. Returns
    ``lines`` written and what was read.

    :raises LogError: when an input is damaged; the file still holds every
        event read before the damage, as ``fb convert`` writes it.
    """
    _whole_rows("convert", options)
    summary = _native.convert(_source(source), os.fspath(out), _options(**options))
    _warn_skipped(summary)
    return summary


def stats(source: Any, *, threads: int = 1, **options: Any) -> Dict[str, Any]:
    """The report ``fb stats --json`` prints, as a dict: counts, rewards,
    skipped events by reason, and counterfactual estimates. Takes
    :func:`read`'s options.

    :param threads: joining threads; the report is the same for any
        number (its sums are added in log order).
    """
    _whole_rows("stats", options)
    return json.loads(_native.stats(_source(source), _options(threads=threads, **options)))


def evaluate(
    source: Any,
    policy: Union[str, Sequence[str]] = "baseline",
    by: Optional[str] = None,
    cats: Union[None, str, Sequence[float]] = None,
    **options: Any,
) -> Any:
    """How other policies would have done on the logged decisions: the
    figures ``fb evaluate`` prints (docs/evaluate.md), as a
    ``pyarrow.Table`` with one row per window, problem type, policy and
    estimator: ``window`` (empty for the whole run), ``problem_type``,
    ``policy``, ``estimator`` (``ips`` with the Gaussian interval,
    ``snips``, ``cressie_read``, ``clopper_pearson``, ``pseudo_inverse``,
    ``slot_N_cressie_read``, and CCB's multislot ``multislot_r_overall``,
    ``multislot_ID_impression``, ``multislot_ID_r_given_impression``,
    ``multislot_ID_r``), ``decisions``, ``value``, ``low``, ``high``.
    The whole report (``fb evaluate --json``) is in the schema's metadata
    under ``fb.evaluate``.

    ``policy`` is one of ``"baseline"``, ``"uniform"``, ``"constant:K"``,
    ``"predictions:FILE"``, or a list of them; the logged policy is always
    the first. ``by`` is ``"hour"`` or ``"day"`` for figures per window too.
    ``cats`` estimates CA decisions with vw-estimators' CATS transformer:
    the model's ``(num_actions, bandwidth, min, max)`` (or that as
    ``"N,B,MIN,MAX"``, as ``fb evaluate --cats``); for CA, ``"constant:VALUE"``
    is a constant action and ``"predictions:FILE"`` VW's ``--cats`` output.
    Without it CA decisions are counted only. Takes :func:`read`'s options:
    ``threads=N`` joins on N threads, the same figures for any N (records
    are taken, and prediction files read along, in log order).

    ``policy`` may instead be a callable (or a list of callables): it is
    given each batch of :func:`read`'s rows (a ``pyarrow.RecordBatch``) and
    returns, per row, its probability of the row's logged action
    (``chosen_action``): a sequence or Arrow array of the batch's length.
    Only learnable CB and multistep decisions are evaluated then (the
    values of other rows are not read); the policy is named by its
    ``__name__``.

    :raises ValueError: a policy that is not one, a prediction file that
        does not match the events.
    """
    import pyarrow as pa

    _whole_rows("evaluate", options)
    policies = [policy] if isinstance(policy, str) or callable(policy) else list(policy)
    if any(callable(p) for p in policies):
        if not all(callable(p) for p in policies):
            raise TypeError("evaluate(): give policies as names or as callables, not both")
        if cats is not None:
            raise TypeError("evaluate(): cats is for named policies; callables see CB and multistep rows")
        text = _evaluate_callables(source, policies, by, options)
    else:
        if cats is not None and not isinstance(cats, str):
            cats = ",".join(repr(float(x)) if i else str(int(x)) for i, x in enumerate(cats))
        text = _native.evaluate(_source(source), policies, by, _options(**options), cats)
    out = json.loads(text)
    schema = pa.schema(
        [
            ("window", pa.string()),
            ("problem_type", pa.string()),
            ("policy", pa.string()),
            ("estimator", pa.string()),
            ("decisions", pa.float64()),
            ("value", pa.float64()),
            ("low", pa.float64()),
            ("high", pa.float64()),
        ],
        metadata={"fb.evaluate": json.dumps(out["report"])},
    )
    return pa.Table.from_pylist(out["rows"], schema=schema)


def _evaluate_callables(source: Any, fns: List[Any], by: Optional[str], options: Dict[str, Any]) -> str:
    """Feeds the learnable CB and multistep rows of each batch, with each
    callable's probabilities, to the native tallies."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [getattr(f, "__name__", f"policy {i + 1}") for i, f in enumerate(fns)]
    ev = _native.GivenEvaluation(names, by)
    for batch in read(source, **options):
        given = []
        for name, f in zip(names, fns):
            q = f(batch)
            q = q.to_pylist() if hasattr(q, "to_pylist") else list(q)
            if len(q) != batch.num_rows:
                raise ValueError(
                    f"evaluate(): the policy {name} gave {len(q)} probabilities for a batch of "
                    f"{batch.num_rows} rows"
                )
            given.append(q)
        kinds = batch.column("problem_type").to_pylist()
        skip = batch.column("skip_learn").to_pylist()
        pass_p = batch.column("pass_probability")
        # 1 - pass_probability in float32, as the log's events compute it.
        p_drop = pc.subtract(pa.scalar(1.0, pa.float32()), pass_p).to_pylist()
        pass_p = pass_p.to_pylist()
        first = pc.list_element(batch.column("probabilities"), 0).to_pylist()
        reward = batch.column("original_reward").to_pylist()
        micros = batch.column("timestamp").cast(pa.int64()).to_pylist()
        keep = [
            i
            for i, k in enumerate(kinds)
            if k in ("cb", "multistep") and not skip[i] and pass_p[i] > 0
        ]
        ev.add(
            [kinds[i] == "multistep" for i in keep],
            [micros[i] // 1_000_000 for i in keep],
            [first[i] for i in keep],
            [reward[i] for i in keep],
            [p_drop[i] for i in keep],
            [[float(q[i]) for i in keep] for q in given],
        )
    return ev.report()


class Report:
    """The ``fb report`` page of a set of logs: ``html`` (one self-contained
    page), ``stats`` (the ``fb stats --json`` report whose figures it
    shows), ``save(path)``; Jupyter shows it inline (``_repr_html_``)."""

    def __init__(self, html: str, stats: Dict[str, Any]) -> None:
        self.html = html
        self.stats = stats

    def save(self, path: Any) -> None:
        """Writes the page to `path` (beside it first, then renamed)."""
        path = os.fspath(path)
        aside = f"{path}.partial-{os.getpid()}"
        with open(aside, "w", encoding="utf-8") as f:
            f.write(self.html)
        os.replace(aside, path)

    def _repr_html_(self) -> str:
        # In a frame of its own: the page's styles and script stay out of
        # the notebook's, and it runs as it does in a browser.
        import html as _html

        return (
            '<iframe style="width:100%;height:720px;border:1px solid #ddd" '
            f'srcdoc="{_html.escape(self.html, quote=True)}"></iframe>'
        )

    def __repr__(self) -> str:
        return f"<vwlogs.Report: {len(self.html)} bytes of HTML, {self.stats.get('kept', 0)} decisions>"


def report(
    source: Any,
    join_window: Optional[float] = None,
    policy: Union[str, Sequence[str], None] = None,
    *,
    threads: int = 1,
    **options: Any,
) -> Report:
    """The ``fb report`` page: a loop's health at a glance (traffic, rewards
    and the baseline's estimate over time, propensities, actions, outcome
    delays, configuration), its figures those of :func:`stats`. Takes
    :func:`read`'s options, and ``join_window`` (seconds) to mark the
    loop's join window on the outcome delays.

    ``policy`` (``"baseline"``, ``"uniform"``, ``"constant:K"``,
    ``"predictions:FILE"``, or a list of them) adds each policy's estimated
    reward per window and over the whole log, the figures of
    :func:`evaluate` (``fb report --policy``).

    :param threads: joining threads; the page is the
        same for any number (its sums are added in log order).

    :raises LogError: on damage, unless ``recover=True``.
    :raises ValueError: a policy that is not one, a prediction file that
        does not match the events.
    """
    _whole_rows("report", options)
    if policy is None:
        policies: List[str] = []
    elif isinstance(policy, str):
        policies = [policy]
    else:
        policies = list(policy)
    if not all(isinstance(p, str) for p in policies):
        raise TypeError("report(): give policies by name (callables are for evaluate())")
    html, stats_json = _native.report(
        _source(source), _options(threads=threads, **options), join_window, policies
    )
    return Report(html, json.loads(stats_json))


def inspect(source: Any) -> Iterator[Dict[str, Any]]:
    """Yields one dict per message of one log: ``index``, ``offset``,
    ``type``, ``size`` (payload bytes) and, for REGULAR messages, ``events``
    and ``event_ids`` (an id repeated in a row once), and ``problems`` when
    the payload is damaged.

    :raises LogError: where the framing breaks.
    """
    return iter(_native.inspect(_source(source)))


class _Schema:
    def __arrow_c_schema__(self) -> Any:
        return _native.schema_capsule()


def schema() -> Any:
    """The Arrow schema of :func:`read`'s rows (``pyarrow.Schema``)."""
    import pyarrow as pa

    return pa.schema(_Schema())
