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
        return JoinedLogsReader(dict(self.options))


class FilePartition(InputPartition):
    """One log file."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class JoinedLogsReader(DataSourceReader):
    """Lists the files on the driver; each task reads one."""

    def __init__(self, options: Dict[str, str]) -> None:
        paths = [v for k, v in options.items() if k.lower() == "path"]
        if not paths:
            raise ValueError('vwlogs: give the logs: spark.read.format("vwlogs").load(PATH)')
        self.path = paths[0]
        self.kwargs = read_options(options)

    def partitions(self) -> List[FilePartition]:
        files = list_files(self.path)
        if not files:
            raise FileNotFoundError(f"vwlogs: {self.path}: no files found")
        return [FilePartition(f) for f in files]

    def read(self, partition: FilePartition) -> Iterator[Any]:
        yield from vwlogs.read(partition.path, **self.kwargs)
