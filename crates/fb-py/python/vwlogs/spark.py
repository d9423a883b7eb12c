"""A Spark data source for joined logs, on Spark's Python Data Source API
(PySpark 4)::

    from vwlogs.spark import JoinedLogs
    spark.dataSource.register(JoinedLogs)
    df = (spark.read.format("vwlogs")
          .option("problemType", "cb")
          .load("s3://bucket/logs/2026-11/*.fb"))

The path is a file, a folder (every file under it, recursively, but hidden
and ``_``-prefixed ones) or a glob, or a list of them
(``.load([path, path])``); paths with a scheme (``s3://``,
``abfss://``, ``gs://``, ``memory://``) are listed and opened with fsspec.
Each file is one partition, read by one task with the same Rust code as
``fb``: a joined log cannot be split at an arbitrary message, because the
joiner carries state from message to message (the checkpoint's reward
settings, deduplicated actions, multistep episodes). Write logs in files of
a few hundred MB for parallelism.

Spark cannot tell a Python data source which columns a query uses, so
every column of every row crosses from Python into the JVM, where each row
is copied whole, context included. A query that needs a few columns should
name them in a schema: the reader then builds only those, in that order::

    df = (spark.read.format("vwlogs")
          .schema("event_id string, timestamp timestamp, reward float")
          .load(path))

A column of a given schema must be one of ``vwlogs.schema()``'s, of its
type or one every value of it converts to without loss (``reward double``
is fine, ``problem_type int`` is not); this and the options' values are
checked on the driver.

Options mirror :func:`vwlogs.read`'s keyword arguments, in camelCase or
snake_case: ``problemType``, ``rewardFunction``, ``defaultReward``,
``learningMode``, ``useClientTime``, ``multistep``, ``multistepReward``,
``compat``, ``since``, ``until``, ``skipLearn``, ``only``, ``recover``,
``batchRows``.
"""

from __future__ import annotations

import glob
import json
import os
from typing import Any, Dict, Iterator, List

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

import vwlogs

# Spark option (lower-cased, as Spark hands them over) -> read() keyword.
_OPTIONS = {
    "problemtype": ("problem_type", str),
    "rewardfunction": ("reward_function", str),
    "defaultreward": ("default_reward", float),
    "learningmode": ("learning_mode", str),
    "useclienttime": ("use_client_time", "bool"),
    "multistep": ("multistep", "bool"),
    "multistepreward": ("multistep_reward", str),
    "compat": ("compat", str),
    "since": ("since", str),
    "until": ("until", str),
    "skiplearn": ("skip_learn", str),
    "only": ("only", str),
    "recover": ("recover", "bool"),
    "batchrows": ("batch_rows", int),
}


def _bool(name: str, value: str) -> bool:
    v = str(value).strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise ValueError(f"vwlogs: {name}: expected true or false, not {value!r}")


def _number(kind: Any, name: str, value: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"vwlogs: {name}: expected a number, not {value!r}") from None


def read_options(options: Dict[str, str]) -> Dict[str, Any]:
    """The :func:`vwlogs.read` keywords of Spark options, every value
    checked as :func:`vwlogs.read` checks it, so that a bad one fails on
    the driver rather than in every task; unknown options are refused (a
    typo would otherwise be ignored)."""
    out: Dict[str, Any] = {}
    for key, value in options.items():
        norm = key.replace("_", "").lower()
        if norm in ("path", "paths"):
            continue
        if norm not in _OPTIONS:
            raise ValueError(
                f"vwlogs: unknown option {key!r}; the options are "
                + ", ".join(sorted({v[0] for v in _OPTIONS.values()}))
            )
        name, kind = _OPTIONS[norm]
        if kind == "bool":
            out[name] = _bool(name, value)
        elif kind is str:
            out[name] = value
        else:
            out[name] = _number(kind, name, value)
    # Spark runs a task per core: one joining thread each.
    out["threads"] = 1
    try:
        vwlogs._checked_options(**out)
    except (TypeError, ValueError) as e:
        raise ValueError(f"vwlogs: {e}") from None
    return out


def given_paths(options: Dict[str, str]) -> List[str]:
    """The paths of ``.load(path)`` (option ``path``) or ``.load([a, b])``
    (option ``paths``, a JSON list)."""
    paths: List[str] = []
    for key, value in options.items():
        if key.lower() == "path":
            paths.append(value)
        elif key.lower() == "paths":
            try:
                listed = json.loads(value)
            except ValueError:
                listed = value
            if isinstance(listed, str):
                listed = [listed]
            if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
                raise ValueError(f"vwlogs: paths: expected a list of paths, not {value!r}")
            paths.extend(listed)
    if not paths:
        raise ValueError('vwlogs: give the logs: spark.read.format("vwlogs").load(PATH or [PATHS])')
    return paths


def _visible(name: str) -> bool:
    return not (name.startswith(".") or name.startswith("_"))


def list_files(path: str) -> List[str]:
    """The files a path names: itself, every file under a folder (sorted,
    recursive, hidden and ``_`` ones left out), or a glob's matches."""
    if "://" in path and not path.startswith("file://"):
        import fsspec

        fs, _, _ = fsspec.get_fs_token_paths(path)
        protocol = path.split("://", 1)[0]
        if glob.has_magic(path):
            found = fs.glob(path)
        elif fs.isdir(path):
            found = fs.find(path)
        else:
            found = [path]
        names = []
        for p in sorted(found):
            if fs.isdir(p) or not _visible(p.rsplit("/", 1)[-1]):
                continue
            names.append(p if "://" in p else f"{protocol}://{p}")
        return names
    if path.startswith("file://"):
        path = path[len("file://") :]
    if glob.has_magic(path):
        found = sorted(glob.glob(path, recursive=True))
    elif os.path.isdir(path):
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if _visible(d))
            found.extend(os.path.join(root, f) for f in sorted(files) if _visible(f))
    else:
        found = [path]
    return [p for p in found if not os.path.isdir(p)]


class JoinedLogs(DataSource):
    """``spark.read.format("vwlogs")``: joined events, one row each, in the
    schema of ``docs/arrow-schema.md`` mapped to Spark types."""

    @classmethod
    def name(cls) -> str:
        return "vwlogs"

    def schema(self) -> Any:
        from pyspark.sql.pandas.types import from_arrow_schema

        return from_arrow_schema(vwlogs.schema())

    def reader(self, schema: Any) -> "JoinedLogsReader":
        return JoinedLogsReader(dict(self.options), schema)


class FilePartition(InputPartition):
    """One log file."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _arrow_schema(schema: Any) -> Any:
    """The Arrow schema Spark expects of a read() for `schema`."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(schema, timezone="UTC")
    except TypeError:  # PySpark before 4.1: timestamps are UTC already
        return to_arrow_schema(schema)


def _converts(have: Any, want: Any) -> bool:
    """Whether every value of Arrow type ``have`` converts to ``want``
    without failing or losing anything: the same type, a wider number,
    text from text, numbers or booleans, a timestamp of the same unit (the
    time zone may differ), and lists and structs (the same fields, in the
    same order) of such. A cast pyarrow accepts is not enough: string to
    int passes on no rows and fails on the first."""
    import pyarrow.types as t

    if have.equals(want):
        return True
    if t.is_dictionary(have):
        return _converts(have.value_type, want)
    if t.is_string(want) or t.is_large_string(want):
        return (
            t.is_string(have) or t.is_large_string(have) or t.is_boolean(have)
            or t.is_integer(have) or t.is_floating(have)
        )
    if t.is_integer(have):
        if t.is_integer(want):
            if t.is_signed_integer(have) == t.is_signed_integer(want):
                return want.bit_width >= have.bit_width
            return t.is_signed_integer(want) and want.bit_width > have.bit_width
        # Floats hold integers exactly up to their mantissa's width.
        mantissa = {16: 11, 32: 24, 64: 53}
        return t.is_floating(want) and mantissa[want.bit_width] > have.bit_width
    if t.is_floating(have):
        return t.is_floating(want) and want.bit_width >= have.bit_width
    if t.is_timestamp(have):
        return t.is_timestamp(want) and want.unit == have.unit
    lists = (t.is_list, t.is_large_list)
    if any(f(have) for f in lists) and any(f(want) for f in lists):
        return _field_converts(have.value_field, want.value_field, check_name=False)
    if t.is_struct(have) and t.is_struct(want):
        if have.num_fields != want.num_fields:
            return False
        return all(_field_converts(have.field(i), want.field(i)) for i in range(have.num_fields))
    return False


def _field_converts(have: Any, want: Any, check_name: bool = True) -> bool:
    """:func:`_converts` for fields: the same name (not for list items),
    and no nulls where the wanted field allows none."""
    if check_name and have.name != want.name:
        return False
    if have.nullable and not want.nullable:
        return False
    return _converts(have.type, want.type)


def _target(schema: Any) -> Any:
    """The columns to build and the Arrow schema to hand Spark, for the
    schema Spark gives the reader (ours, or one the user chose); ``None``
    columns when it is ours. Raises ``ValueError`` on the driver for a
    column we do not have or that does not convert (:func:`_converts`)."""
    ours = vwlogs.schema()
    target = _arrow_schema(schema)
    names = list(target.names)
    if names == list(ours.names) and target.equals(ours):
        return None, None
    for field in target:
        if field.name not in ours.names:
            raise ValueError(
                f"vwlogs: the schema names a column {field.name!r} joined logs do not have; "
                f"the columns are {', '.join(ours.names)}"
            )
        have = ours.field(field.name)
        if not _field_converts(have, field):
            nulls = " (it has nulls)" if have.nullable and not field.nullable else ""
            raise ValueError(
                f"vwlogs: column {field.name!r} is {have.type}, which does not convert to "
                f"{field.type}{' not null' if not field.nullable else ''}{nulls} without failing "
                "or losing values"
            )
    return names, target


class JoinedLogsReader(DataSourceReader):
    """Lists the files on the driver; each task reads one."""

    def __init__(self, options: Dict[str, str], schema: Any = None) -> None:
        self.paths = given_paths(options)
        self.kwargs = read_options(options)
        self.target = None
        if schema is not None:
            columns, self.target = _target(schema)
            if columns is not None:
                self.kwargs["columns"] = columns

    def partitions(self) -> List[FilePartition]:
        files: List[str] = []
        for path in self.paths:
            found = list_files(path)
            if not found:
                raise FileNotFoundError(f"vwlogs: {path}: no files found")
            files.extend(found)
        return [FilePartition(f) for f in files]

    def read(self, partition: FilePartition) -> Iterator[Any]:
        target = self.target
        if target is None:
            yield from vwlogs.read(partition.path, **self.kwargs)
            return
        import pyarrow as pa

        for batch in vwlogs.read(partition.path, **self.kwargs):
            # Same columns in the same order: only types and nullability
            # may differ (a cast, or a relabelling that copies nothing).
            arrays = [
                col if col.type == field.type else col.cast(field.type)
                for col, field in zip(batch.columns, target)
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=target)
