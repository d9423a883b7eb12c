"""A Spark data source for joined logs, on Spark's Python Data Source API
(PySpark 4)::

    from vwlogs.spark import JoinedLogs
    spark.dataSource.register(JoinedLogs)
    df = (spark.read.format("vwlogs")
          .option("problemType", "cb")
          .load("s3://bucket/logs/2026-11/*.fb"))

The path is a file, a folder (every file under it, recursively, but hidden
and ``_``-prefixed ones) or a glob; paths with a scheme (``s3://``,
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
type or one it casts to (``reward double`` is fine).

Options mirror :func:`vwlogs.read`'s keyword arguments, in camelCase or
snake_case: ``problemType``, ``rewardFunction``, ``defaultReward``,
``learningMode``, ``useClientTime``, ``multistep``, ``multistepReward``,
``compat``, ``since``, ``until``, ``skipLearn``, ``only``, ``recover``,
``batchRows``.
"""

from __future__ import annotations

import glob
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


def _bool(key: str, value: str) -> bool:
    v = str(value).strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise ValueError(f"option {key}: expected true or false, not {value!r}")


def read_options(options: Dict[str, str]) -> Dict[str, Any]:
    """The :func:`vwlogs.read` keywords of Spark options; unknown ones are
    refused (a typo would otherwise be ignored)."""
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
        out[name] = _bool(key, value) if kind == "bool" else kind(value)
    # Spark runs a task per core: one joining thread each.
    out["threads"] = 1
    # Fail on a bad option on the driver, not in every task.
    vwlogs._options(**out)
    return out


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


def _target(schema: Any) -> Any:
    """The columns to build and the Arrow schema to hand Spark, for the
    schema Spark gives the reader (ours, or one the user chose); ``None``
    columns when it is ours. Raises ``ValueError`` on the driver for a
    column we do not have or cannot cast."""
    import pyarrow as pa

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
        have = ours.field(field.name).type
        if have != field.type:
            try:
                pa.array([], type=have).cast(field.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise ValueError(
                    f"vwlogs: column {field.name!r} is {have}, which does not cast to {field.type}: {e}"
                ) from None
    return names, target


class JoinedLogsReader(DataSourceReader):
    """Lists the files on the driver; each task reads one."""

    def __init__(self, options: Dict[str, str], schema: Any = None) -> None:
        paths = [v for k, v in options.items() if k.lower() == "path"]
        if not paths:
            raise ValueError('vwlogs: give the logs: spark.read.format("vwlogs").load(PATH)')
        self.path = paths[0]
        self.kwargs = read_options(options)
        self.target = None
        if schema is not None:
            columns, self.target = _target(schema)
            if columns is not None:
                self.kwargs["columns"] = columns

    def partitions(self) -> List[FilePartition]:
        files = list_files(self.path)
        if not files:
            raise FileNotFoundError(f"vwlogs: {self.path}: no files found")
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
