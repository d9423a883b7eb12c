"""Type stubs of vwlogs (see the module docstring and docs/python.md)."""

from datetime import date, datetime
from os import PathLike
from typing import Any, BinaryIO, Callable, Dict, Iterator, List, Literal, Optional, Sequence, Union

import pyarrow

BytesLike = Union[bytes, bytearray, memoryview]
Source = Union[
    str, "PathLike[str]", BytesLike, BinaryIO, Sequence[Union[str, "PathLike[str]", BytesLike, BinaryIO]]
]
Time = Union[str, datetime, date, None]

SCHEMA_VERSION: str
__version__: str

class LogError(Exception):
    """A log is damaged or is not a joined log (``vwlogs.LogError``,
    picklable with its attributes)."""

    path: str
    offset: int
    message_index: Optional[int]

class SkippedEventsWarning(UserWarning): ...

class Reader:
    """Reads nothing until a consumer asks for the stream; each consumer
    gets a fresh read when ``rereadable`` (paths, URLs, bytes), the first
    only for a file object."""

    @property
    def rereadable(self) -> bool: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...
    def __arrow_c_schema__(self) -> Any: ...
    @property
    def schema(self) -> pyarrow.Schema: ...
    def __iter__(self) -> Iterator[pyarrow.RecordBatch]: ...
    def read_all(self) -> pyarrow.Table: ...
    def to_pandas(self, **kwargs: Any) -> Any: ...
    @property
    def summary(self) -> Dict[str, Any]: ...

def read(
    source: Source,
    *,
    problem_type: Optional[Literal["cb", "ccb", "slates", "ca", "multistep"]] = None,
    reward_function: Optional[Literal["earliest", "average", "median", "sum", "min", "max"]] = None,
    default_reward: Optional[float] = None,
    learning_mode: Optional[Literal["online", "apprentice", "loggingonly"]] = None,
    use_client_time: bool = False,
    multistep: bool = False,
    multistep_reward: str = "suffix_mean",
    compat: Literal["sane", "reference"] = "sane",
    since: Time = None,
    until: Time = None,
    skip_learn: Literal["include", "exclude"] = "include",
    only: Union[str, Sequence[str], None] = None,
    inline_dedup: bool = False,
    recover: bool = False,
    batch_rows: int = 65536,
    threads: int = 1,
    columns: Optional[Union[str, Sequence[str]]] = None,
) -> Reader: ...
def convert(source: Source, out: Union[str, "PathLike[str]"], **options: Any) -> Dict[str, Any]: ...
def stats(source: Source, *, threads: int = 1, **options: Any) -> Dict[str, Any]: ...
def evaluate(
    source: Source,
    policy: Union[str, Sequence[str], Callable[[pyarrow.RecordBatch], Any], Sequence[Callable[[pyarrow.RecordBatch], Any]]] = "baseline",
    by: Optional[Literal["hour", "day"]] = None,
    **options: Any,
) -> pyarrow.Table: ...

class Report:
    """The ``fb report`` page: ``html``, the ``stats`` it shows,
    ``save(path)``, and ``_repr_html_`` for Jupyter."""

    html: str
    stats: Dict[str, Any]
    def __init__(self, html: str, stats: Dict[str, Any]) -> None: ...
    def save(self, path: Union[str, "PathLike[str]"]) -> None: ...
    def _repr_html_(self) -> str: ...

def report(
    source: Source,
    join_window: Optional[float] = None,
    policy: Union[str, Sequence[str], None] = None,
    *,
    threads: int = 1,
    **options: Any,
) -> Report: ...
def inspect(source: Source) -> Iterator[Dict[str, Any]]: ...
def schema() -> pyarrow.Schema: ...
