"""Append-only, crash-safe, resumable store of episode records: ``<run_dir>/results.jsonl`` + ``run.json``.

File format and semantics
-------------------------
* ``results.jsonl``: one canonical JSON record per line (:meth:`EpisodeRecord.to_json_line`), each terminated by
  ``"\\n"``. Every append hands the whole line to the OS (unbuffered ``os.write`` on an ``O_APPEND`` descriptor,
  so there is no user-space buffer left to flush) and then calls ``os.fsync()`` before returning; a failed write
  is rolled back to the previous length. The file is never rewritten, only appended to (and, on repair,
  truncated back to its last complete line).
* **Effective record per key**: the *last* line for an episode key. The writer keeps this unambiguous:

  - a key whose effective record is ``"ok"`` is complete; appending anything for it raises
    :class:`DuplicateEpisodeError` (so a second "ok" is impossible, and an "ok" is never superseded);
  - a key whose effective record is ``"infra_failure"`` may be retried: a later line (another failure or the
    eventual "ok") supersedes it.

  The loader enforces the same rule: a file in which anything follows an "ok" line of the same key was not
  written by this store and is refused (:class:`CorruptResultsError`).
* **Torn tail**: a final fragment without a terminating newline is what a process killed mid-write leaves. Such
  a fragment never counts as a record (even if it happens to be valid JSON, it was never fsync'd as a complete
  line). :class:`ResultsStore` truncates it away on open and reports it in :attr:`ResultsStore.repair`; the
  read-only :func:`load_run` ignores it and reports it without touching the file. A malformed *complete* line
  anywhere is corruption and raises: nothing is silently dropped.
* ``run.json``: the run's identity (:class:`RunConfig`), written atomically when the run dir is created.
  Re-opening with a different configuration raises :class:`ConfigMismatchError` naming every differing key
  (dotted paths into the config dict).
* **Unwritable run dir** (read-only file system, disk full): every write the store makes raises
  :class:`RunDirWriteError`, one line naming the path and the OS's reason. A failed append is rolled back
  first, so what was recorded stays intact, and the episode whose record could not be written has no line at
  all: running the same command once the dir is writable again runs it as the same attempt, and the file ends
  byte-identical to an uninterrupted run.
* ``.lock``: held with ``fcntl.flock(LOCK_EX | LOCK_NB)`` while a :class:`ResultsStore` is open, so two
  evaluators cannot write the same run dir (:class:`RunDirLockedError`). Readers (:func:`load_run`, metrics,
  reports) take no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .episode import EpisodeRecord, RecordError, dumps_canonical

LOG = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"
LOCK_FILE = ".lock"
METRICS_FILE = "metrics.json"
RUN_FORMAT_VERSION = 1
CONFIG_INFO_KEYS: tuple[str, ...] = (
    "agent_type",
    "nbv_type",
    "fusion_type",
    "bbox_mode",
    "max_steps",
    "query_mode",
)


class StoreError(RuntimeError):
    """Base class of the store's errors."""


class RunDirLockedError(StoreError):
    """Another process (or another open store in this process) holds the run dir."""


class ConfigMismatchError(StoreError):
    """``run.json`` of an existing run dir differs from the configuration given to resume it."""

    def __init__(self, run_dir: Path, differing: Sequence[str], details: Sequence[str]) -> None:
        self.differing = tuple(differing)
        lines = "\n  ".join(details)
        super().__init__(
            f"cannot resume {run_dir}: the run configuration differs from {run_dir / RUN_FILE} in "
            f"{len(differing)} key(s): {', '.join(differing)}\n  {lines}\n"
            "Use a new run dir, or restore the original configuration."
        )


class CorruptResultsError(StoreError):
    """``results.jsonl`` holds a line this store could not have written."""


class DuplicateEpisodeError(StoreError):
    """The episode key already has a completed ("ok") record."""


class RunDirWriteError(StoreError):
    """Something in the run dir cannot be written (read-only file system, no space left, no permission).

    Not an episode's failure: the run stops, keeps what it recorded, and resumes once the dir is writable. A
    separate class so callers can tell it apart from bad input (the CLIs exit 1 for it, 2 for bad input) and so
    an episode driver that records dataset ``OSError`` s as infrastructure failures does not swallow it.
    """

    def __init__(self, path: Path, error: OSError) -> None:
        self.path = path
        self.errno = error.errno
        reason = error.strerror or str(error) or type(error).__name__
        super().__init__(
            f"cannot write {path}: {reason}; what was recorded is kept, make it writable (or free space) and "
            "run the same command to resume"
        )


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn an ``OSError`` raised while writing ``path`` into a :class:`RunDirWriteError` naming it."""
    try:
        yield
    except RunDirWriteError:
        raise
    except OSError as error:
        raise RunDirWriteError(Path(error.filename) if error.filename else path, error) from error


# ------------------------------------------------------------------------------------------------ run config


def _json_normalise(value: Any) -> Any:
    """The value as it reads back from JSON (tuples → lists, keys → str); refuses non-JSON values."""
    try:
        return json.loads(json.dumps(value, allow_nan=False, sort_keys=False))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"run configuration is not JSON-serialisable: {exc}") from exc


@dataclass(frozen=True)
class RunConfig:
    """What identifies a run; stored in ``run.json`` and compared on resume.

    ``config`` is the full evaluator/agent configuration (any JSON-serialisable dict). ``config_info`` holds
    the six reference ``metrics.json`` config fields (agent_type, nbv_type, fusion_type, bbox_mode, max_steps,
    query_mode) so that analysis tools need not know the config's layout. ``slice`` is ``(start, end)`` of the
    index (end None = to the end). ``run_id`` defaults to a fingerprint of everything else; records written to
    the store must carry it. ``name`` is a display name for tables and reports (not compared on resume).
    """

    config: Mapping[str, Any]
    index_file: str
    slice: tuple[int, int | None] = (0, None)
    seed: int = 42
    code_version: str = ""
    config_info: Mapping[str, Any] = field(default_factory=dict)
    unsure_as_negative: bool = True
    run_id: str = ""
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.config, Mapping):
            raise StoreError("RunConfig.config must be a mapping")
        object.__setattr__(self, "config", _json_normalise(dict(self.config)))
        unknown = sorted(set(self.config_info) - set(CONFIG_INFO_KEYS))
        if unknown:
            raise StoreError(
                f"RunConfig.config_info: unknown keys {unknown}; allowed {list(CONFIG_INFO_KEYS)}"
            )
        info = {k: self.config_info.get(k) for k in CONFIG_INFO_KEYS}
        object.__setattr__(self, "config_info", _json_normalise(info))
        start, end = self.slice
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise StoreError(f"RunConfig.slice start must be an int >= 0, got {start!r}")
        if end is not None and (isinstance(end, bool) or not isinstance(end, int) or end < start):
            raise StoreError(f"RunConfig.slice end must be None or an int >= start, got {end!r}")
        object.__setattr__(self, "slice", (start, end))
        if not isinstance(self.unsure_as_negative, bool):
            raise StoreError("RunConfig.unsure_as_negative must be a bool")
        if not self.run_id:
            object.__setattr__(self, "run_id", self.fingerprint())

    def identity_dict(self) -> dict[str, Any]:
        """Everything compared on resume (all fields except ``name``)."""
        return {
            "run_id": self.run_id,
            "config": self.config,
            "index_file": self.index_file,
            "slice": list(self.slice),
            "seed": self.seed,
            "code_version": self.code_version,
            "config_info": self.config_info,
            "unsure_as_negative": self.unsure_as_negative,
        }

    def fingerprint(self) -> str:
        """Short stable hash of the identity (without run_id); the default run id."""
        ident = self.identity_dict()
        ident.pop("run_id")
        digest = hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        return f"run-{digest[:12]}"

    def to_json_dict(self) -> dict[str, Any]:
        return {"format_version": RUN_FORMAT_VERSION, "name": self.name, **self.identity_dict()}

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        if data.get("format_version") != RUN_FORMAT_VERSION:
            raise StoreError(f"unsupported run.json format_version {data.get('format_version')!r}")
        sl = data.get("slice", [0, None])
        return cls(
            config=data["config"],
            index_file=data["index_file"],
            slice=(sl[0], sl[1]),
            seed=data["seed"],
            code_version=data["code_version"],
            config_info=data.get("config_info") or {},
            unsure_as_negative=data.get("unsure_as_negative", True),
            run_id=data["run_id"],
            name=data.get("name", ""),
        )


def _diff(a: Any, b: Any, path: str, out: list[tuple[str, Any, Any]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a:
                out.append((sub, "<absent>", b[key]))
            elif key not in b:
                out.append((sub, a[key], "<absent>"))
            else:
                _diff(a[key], b[key], sub, out)
    elif a != b or type(a) is not type(b):
        out.append((path, a, b))


def config_differences(stored: RunConfig, given: RunConfig) -> list[tuple[str, Any, Any]]:
    """``(dotted key, stored value, given value)`` for every identity key that differs."""
    out: list[tuple[str, Any, Any]] = []
    _diff(stored.identity_dict(), given.identity_dict(), "", out)
    return out


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON via a temp file + fsync + rename (readers never see a partial file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with writing(path):
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=2, ensure_ascii=False, allow_nan=False)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):  # no half-written temp file left behind
                tmp.unlink()
            raise
        _fsync_dir(path.parent)


def read_run_config(run_dir: str | os.PathLike[str]) -> RunConfig:
    path = Path(run_dir) / RUN_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{path} not found: {run_dir} is not a run dir") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc
    try:
        return RunConfig.from_json_dict(data)
    except (KeyError, TypeError, StoreError) as exc:
        raise StoreError(f"{path} is malformed: {exc!r}") from exc


# ------------------------------------------------------------------------------------------------ parsing


@dataclass(frozen=True)
class TornTail:
    """An unterminated last fragment found in ``results.jsonl``."""

    line_number: int
    offset: int
    dropped_bytes: int
    repaired: bool

    def describe(self, path: Path) -> str:
        action = "truncated away" if self.repaired else "ignored (file left untouched)"
        return (
            f"{path}: line {self.line_number} is an unterminated fragment of {self.dropped_bytes} bytes "
            f"(a write was interrupted); {action}. Its episode counts as not run."
        )


@dataclass
class _Parsed:
    effective: dict[str, EpisodeRecord]
    line_counts: dict[str, int]
    good_length: int
    torn: TornTail | None
    lines: int


def _parse_results(path: Path, *, repair: bool) -> _Parsed:
    effective: dict[str, EpisodeRecord] = {}
    line_counts: dict[str, int] = {}
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _Parsed(effective, line_counts, 0, None, 0)
    offset = 0
    number = 0
    torn = None
    while offset < len(data):
        number += 1
        end = data.find(b"\n", offset)
        if end < 0:
            torn = TornTail(number, offset, len(data) - offset, repaired=repair)
            break
        raw = data[offset:end]
        try:
            record = EpisodeRecord.from_json_line(raw.decode("utf-8"))
        except (UnicodeDecodeError, RecordError) as exc:
            raise CorruptResultsError(f"{path}: line {number} is not a valid record: {exc}") from exc
        previous = effective.get(record.episode_key)
        if previous is not None and previous.is_ok:
            raise CorruptResultsError(
                f"{path}: line {number} follows a completed record of {record.episode_key!r}; "
                "an 'ok' record is final (this file was not written by ResultsStore)"
            )
        effective[record.episode_key] = record
        line_counts[record.episode_key] = line_counts.get(record.episode_key, 0) + 1
        offset = end + 1
    return _Parsed(effective, line_counts, offset, torn, number - (1 if torn else 0))


def _ordered(records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    return sorted(records, key=lambda r: (r.episode_index, r.episode_key))


# ------------------------------------------------------------------------------------------------ read-only


@dataclass(frozen=True)
class LoadedRun:
    """A run dir read without locking or modifying it."""

    run_dir: Path
    run_config: RunConfig
    records: tuple[EpisodeRecord, ...]
    """Effective record per key, ordered by ``(episode_index, episode_key)``."""
    torn_tail: TornTail | None
    line_count: int

    @property
    def name(self) -> str:
        return self.run_config.name or self.run_dir.resolve().name

    @property
    def ok_records(self) -> tuple[EpisodeRecord, ...]:
        return tuple(r for r in self.records if r.is_ok)


def load_run(run_dir: str | os.PathLike[str]) -> LoadedRun:
    """Read a run dir (``run.json`` + effective records). Safe while an evaluator is writing to it."""
    path = Path(run_dir)
    config = read_run_config(path)
    parsed = _parse_results(path / RESULTS_FILE, repair=False)
    if parsed.torn is not None:
        LOG.warning(parsed.torn.describe(path / RESULTS_FILE))
    return LoadedRun(path, config, tuple(_ordered(parsed.effective.values())), parsed.torn, parsed.lines)


# ------------------------------------------------------------------------------------------------ writer


class ResultsStore:
    """The writer side of a run dir. Use :meth:`open` (or the context manager) and :meth:`append`.

    Typical evaluator loop::

        with ResultsStore.open(run_dir, run_config) as store:
            for i, entry in enumerate(index):
                key = make_episode_key(...)
                if store.is_complete(key):
                    continue
                record = ...  # build_episode_record(..., run_id=store.run_id, attempts=store.attempts(key) + 1)
                store.append(record)
    """

    def __init__(self, run_dir: Path, run_config: RunConfig, lock_fd: int, parsed: _Parsed) -> None:
        self.run_dir = run_dir
        self.run_config = run_config
        self._lock_fd: int | None = lock_fd
        self._effective = parsed.effective
        self._line_counts = parsed.line_counts
        self._size = parsed.good_length
        self.repair: TornTail | None = parsed.torn
        # Unbuffered: a record is handed to the OS in full (os.write loop) and fsync'd before append returns.
        self._fd: int | None = os.open(self.results_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    # ---------------------------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        run_dir: str | os.PathLike[str],
        run_config: RunConfig,
        *,
        allow_changed: Iterable[str] = (),
    ) -> ResultsStore:
        """Create or resume a run dir.

        A new dir gets ``run.json``; an existing one must match ``run_config`` except for the dotted keys (or
        key prefixes) in ``allow_changed``; ``run.json`` keeps the original values. Raises
        :class:`RunDirLockedError`, :class:`ConfigMismatchError`, :class:`CorruptResultsError`.
        """
        path = Path(run_dir)
        with writing(path):
            path.mkdir(parents=True, exist_ok=True)
            lock_fd = cls._acquire_lock(path)
        try:
            run_file = path / RUN_FILE
            if run_file.exists():
                stored = read_run_config(path)
                allowed = tuple(allow_changed)
                diffs = [
                    d
                    for d in config_differences(stored, run_config)
                    if not any(d[0] == a or d[0].startswith(a + ".") for a in allowed)
                ]
                if diffs:
                    details = [f"{k}: stored {s!r}, given {g!r}" for k, s, g in diffs]
                    raise ConfigMismatchError(path, [d[0] for d in diffs], details)
                run_config = stored
            else:
                if (path / RESULTS_FILE).exists():
                    raise StoreError(
                        f"{path} has {RESULTS_FILE} but no {RUN_FILE}; refusing to guess its config"
                    )
                write_json_atomic(run_file, run_config.to_json_dict())
            parsed = _parse_results(path / RESULTS_FILE, repair=True)
            if parsed.torn is not None:
                with writing(path / RESULTS_FILE):
                    cls._truncate(path / RESULTS_FILE, parsed.good_length)
                LOG.warning(parsed.torn.describe(path / RESULTS_FILE))
            with writing(path / RESULTS_FILE):
                return cls(path, run_config, lock_fd, parsed)
        except BaseException:
            os.close(lock_fd)
            raise

    @staticmethod
    def _acquire_lock(path: Path) -> int:
        lock_path = path / LOCK_FILE
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise RunDirLockedError(
                f"{path} is in use by another evaluator (pid {holder}); wait for it to finish or use another "
                "run dir"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd

    @staticmethod
    def _truncate(path: Path, length: int) -> None:
        with open(path, "r+b") as f:
            f.truncate(length)
            f.flush()
            os.fsync(f.fileno())

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------------------------- queries

    @property
    def results_path(self) -> Path:
        return self.run_dir / RESULTS_FILE

    @property
    def run_id(self) -> str:
        return self.run_config.run_id

    @property
    def closed(self) -> bool:
        return self._lock_fd is None

    def is_complete(self, key: str) -> bool:
        """True when the key's effective record is "ok" (skip it on resume)."""
        record = self._effective.get(key)
        return record is not None and record.is_ok

    def completed_keys(self) -> frozenset[str]:
        return frozenset(k for k, r in self._effective.items() if r.is_ok)

    def failed_keys(self) -> frozenset[str]:
        """Keys whose effective record is an infra failure (candidates for a retry)."""
        return frozenset(k for k, r in self._effective.items() if not r.is_ok)

    def attempts(self, key: str) -> int:
        """How many records the file holds for ``key`` (0 = never tried)."""
        return self._line_counts.get(key, 0)

    def get(self, key: str) -> EpisodeRecord | None:
        return self._effective.get(key)

    def records(self) -> list[EpisodeRecord]:
        """Effective records ordered by ``(episode_index, episode_key)``."""
        return _ordered(self._effective.values())

    def __len__(self) -> int:
        return len(self._effective)

    def __iter__(self) -> Iterator[EpisodeRecord]:
        return iter(self.records())

    # ---------------------------------------------------------------------------------- writing

    def append(self, record: EpisodeRecord) -> None:
        """Append one record durably (write + flush + fsync).

        Raises :class:`DuplicateEpisodeError` if the key is already complete, :class:`StoreError` if the record
        carries another run's id or the store is closed, :class:`RunDirWriteError` if the line cannot be
        written. On a failed write the file is truncated back to its previous length, so no partial line is
        left behind (and the store's counts are unchanged: the episode is simply not recorded).
        """
        if self.closed:
            raise StoreError(f"store for {self.run_dir} is closed")
        if not isinstance(record, EpisodeRecord):
            raise TypeError(f"expected an EpisodeRecord, got {type(record).__name__}")
        if record.run_id != self.run_id:
            raise StoreError(
                f"record {record.episode_key!r} has run_id {record.run_id!r}, this run is {self.run_id!r}"
            )
        if self.is_complete(record.episode_key):
            raise DuplicateEpisodeError(
                f"episode {record.episode_key!r} already has a completed record in {self.results_path}"
            )
        line = (record.to_json_line() + "\n").encode("ascii")
        assert self._fd is not None
        try:
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except BaseException as error:
            # Roll back to the last complete line so the file never holds a partial record.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
            with contextlib.suppress(OSError):
                os.fsync(self._fd)
            if isinstance(error, OSError):
                raise RunDirWriteError(self.results_path, error) from error
            raise
        self._size += len(line)
        self._effective[record.episode_key] = record
        self._line_counts[record.episode_key] = self._line_counts.get(record.episode_key, 0) + 1


def canonical_results_bytes(records: Iterable[EpisodeRecord]) -> bytes:
    """The bytes a results file holding exactly ``records`` (in this order) would contain."""
    return b"".join((dumps_canonical(r.to_json_dict()) + "\n").encode("ascii") for r in records)
