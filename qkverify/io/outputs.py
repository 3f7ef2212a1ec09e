"""Output folders and atomic writes.

Every command that writes files checks its output folder *before* any long
work (:func:`probe_output_dir`), so that an unwritable ``--out`` is a
one-line error (exit 2) after a fraction of a second, not after minutes of
computation.

Files are written atomically (:func:`atomic_write_bytes`): the bytes go to a
hidden temporary file in the target folder, which is then renamed over the
target.  A temporary is named

    ``.<target name>.<host>.<pid>.<random>.tmp``

so that a process killed between the two steps (SIGKILL runs no cleanup
code) leaves a file whose owner can be identified.  Before writing into a
folder, :func:`clean_stale_temporaries` removes the temporaries of that
naming pattern whose writer is provably gone: written on this host, by a
process id that is no longer alive, and last modified before the current
process started.  A concurrent writer's temporary (its pid alive, or a file
newer than this process) is never touched; nor is any file of another name.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import socket
import time
from pathlib import Path

from ..errors import QKInputError

#: wall-clock time at which this module was imported: the writing process
#: started no later than this, so a temporary modified before it cannot be
#: one this process is still writing
PROCESS_START = time.time()

#: the naming pattern of our temporaries (see module docstring)
TEMP_PATTERN = re.compile(r"^\.(?P<target>.+)\.(?P<host>[A-Za-z0-9-]+)\.(?P<pid>[0-9]+)\.(?P<token>[0-9a-f]{12})\.tmp$")

_cleaned: set[str] = set()

#: folders (as given, with the working folder for a relative one) that existed and were scanned in
#: this process: a write into one of them neither scans nor resolves nor creates it again
_ready: set = set()


def _dir_key(d: str) -> tuple[str, str]:
    """The fast-path key of a folder as given: no path resolution (a system call per component)."""
    return (d, "") if os.path.isabs(d) else (d, os.getcwd())


@functools.lru_cache(maxsize=1)
def _host() -> str:
    """This machine's host name reduced to ``[A-Za-z0-9-]`` (at most 40
    characters; ``"host"`` when it has none).  Read once per process."""
    return re.sub(r"[^A-Za-z0-9-]+", "-", socket.gethostname()).strip("-")[:40] or "host"


def temp_path(target: str | Path) -> Path:
    """A fresh temporary path beside ``target`` following :data:`TEMP_PATTERN`.

    >>> p = temp_path("/tmp/x/cert.json")
    >>> bool(TEMP_PATTERN.match(p.name)), p.parent.as_posix(), p.name.startswith(".cert.json.")
    (True, '/tmp/x', True)
    """
    t = Path(target)
    return t.parent / _temp_name(t.name)


def _temp_name(name: str) -> str:
    """The name of a fresh temporary for a file called ``name`` (:data:`TEMP_PATTERN`)."""
    return f".{name}.{_host()}.{os.getpid()}.{secrets.token_hex(6)}.tmp"


def _pid_alive(pid: int) -> bool:
    """True when a process with this id exists (or may exist: a process of
    another user answers EPERM).  Only a definite "no such process" is False."""
    if pid <= 0:
        return True
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def clean_stale_temporaries(directory: str | Path, *, force_rescan: bool = False) -> list[Path]:
    """Remove stale temporaries of :data:`TEMP_PATTERN` in ``directory``
    (not recursive) and return the paths removed.

    A file is removed only when all of these hold: its name matches the
    pattern, it is a regular file, its host part is this host, its pid is not
    a live process, and it was last modified before :data:`PROCESS_START`.
    Errors (a file vanishing, no permission) are ignored: cleaning is best
    effort and never stops a write.  Each folder is scanned once per process
    unless ``force_rescan``.
    """
    fast = _dir_key(os.fspath(directory))
    if fast in _ready and not force_rescan:
        return []
    d = Path(directory)
    exists = d.is_dir()
    key = str(d.resolve()) if exists else str(d)
    if exists:
        _ready.add(fast)
    if key in _cleaned and not force_rescan:
        return []
    _cleaned.add(key)
    removed: list[Path] = []
    host = _host()
    try:
        entries = list(os.scandir(d))
    except OSError:
        return removed
    for e in entries:
        m = TEMP_PATTERN.match(e.name)
        if not m or m.group("host") != host:
            continue
        try:
            if not e.is_file(follow_symlinks=False):
                continue
            if e.stat(follow_symlinks=False).st_mtime >= PROCESS_START:
                continue
            if _pid_alive(int(m.group("pid"))):
                continue
            os.unlink(e.path)
            removed.append(Path(e.path))
        except OSError:
            continue
    return removed


def _nearest_existing(p: Path) -> Path:
    q = p
    while not q.exists():
        if q.parent == q:
            break
        q = q.parent
    return q


def _why(err: OSError) -> str:
    return err.strerror or err.__class__.__name__


def probe_output_dir(directory: str | Path, what: str = "--out") -> Path:
    """Check, without creating anything that stays, that files can be
    written into ``directory`` (which may not exist yet: then its nearest
    existing ancestor must be a writable folder).  Returns the path.

    The probe creates and removes one temporary file (named like any other
    temporary, so that even a kill in between leaves nothing that a later run
    does not clean).  Raises QKInputError (exit 2, one line) when the path or
    an ancestor is a file, or the folder is not writable.
    """
    d = Path(directory)
    base = _nearest_existing(d)
    if not base.is_dir():
        raise QKInputError(f"{what} {d}: {base} exists and is not a directory")
    if base == d:
        clean_stale_temporaries(d)
    probe = temp_path(base / "qkverify-probe")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as err:
        raise QKInputError(f"{what} {d}: cannot write in {base} ({_why(err)})") from None
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass
    return d


def probe_output_file(path: str | Path, what: str = "--out") -> Path:
    """Like :func:`probe_output_dir` for a single output file: ``path`` must
    not be a folder, and its folder must be writable.  Raises QKInputError."""
    p = Path(path)
    if p.is_dir():
        raise QKInputError(f"{what} {p}: is a directory, expected a file")
    probe_output_dir(p.parent, what)
    return p


def ensure_dir(directory: str | Path, what: str = "output folder") -> Path:
    """``mkdir -p directory``; QKInputError (one line) when it cannot be
    created (a file in the way, no permission)."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise QKInputError(f"{what} {d}: exists and is not a directory") from None
    except OSError as err:
        raise QKInputError(f"{what} {d}: cannot create ({_why(err)})") from None
    return d


_FCHMOD = hasattr(os, "fchmod")   # not on Windows


def atomic_write_bytes(path: str | Path, data: bytes, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file, fsync, rename):
    a reader sees the old file or the new one, never a part.  Stale
    temporaries in the folder are cleaned first (see
    :func:`clean_stale_temporaries`; once per folder and process).  Raises
    QKInputError when the folder cannot be created or written."""
    p = Path(path)
    folder = os.fspath(p.parent)
    if _dir_key(folder) not in _ready:  # first write here: create the folder, clean it
        ensure_dir(folder)
        clean_stale_temporaries(folder)
    tmp = os.path.join(folder, _temp_name(p.name))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileNotFoundError:  # the folder was removed since this process last wrote there
            _ready.discard(_dir_key(folder))
            ensure_dir(folder)
            fd = os.open(tmp, flags, 0o600)
    except OSError as err:
        raise QKInputError(f"{p}: cannot write ({_why(err)})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if _FCHMOD:
                os.fchmod(fd, mode)
            os.fsync(fd)
        if not _FCHMOD:
            os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):
            raise QKInputError(f"{p}: cannot write ({_why(err)})") from None
        raise
    return p


def atomic_write_text(path: str | Path, text: str) -> Path:
    """:func:`atomic_write_bytes` of UTF-8 ``text``."""
    return atomic_write_bytes(path, text.encode("utf-8"))


#: where user runs write when no ``--out`` is given: ``./qkverify-out/<command>/…`` in the
#: current folder, never the shipped ``certificates/`` (only ``--out certificates`` writes there)
DEFAULT_ROOT = Path("qkverify-out")


def default_out(command: str, *parts: str) -> Path:
    """The default output folder of a command, ``./qkverify-out/<command>/<parts…>``.

    >>> default_out("heads", "all-MiniLM-L6-v2").as_posix()
    'qkverify-out/heads/all-MiniLM-L6-v2'
    """
    return DEFAULT_ROOT.joinpath(command, *parts)


def csv_text(header: list[str], rows) -> str:
    """CSV text with LF line endings (``csv``'s default is CRLF); cells are
    written as given: numbers as numbers, ``None`` as an empty cell.

    >>> csv_text(["a", "b"], [[1, None], [0.5, "x,y"]])
    'a,b\\n1,\\n0.5,"x,y"\\n'
    """
    import csv
    import io

    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    return buf.getvalue()


def atomic_write_csv(path: str | Path, header: list[str], rows) -> Path:
    """:func:`csv_text` written atomically."""
    return atomic_write_text(path, csv_text(header, rows))


def atomic_write_json(path: str | Path, doc, indent: int = 1) -> Path:
    """A JSON document (UTF-8, a final newline) written atomically: the text of
    ``json.dumps(doc, indent=indent, ensure_ascii=False)``."""
    import json

    text = None
    if indent == 1:
        from .jsontext import indent1

        try:
            text = indent1(doc)
        except (TypeError, RecursionError):  # a key json converts, or an error json names
            text = None
    if text is None:
        text = json.dumps(doc, indent=indent, ensure_ascii=False)
    return atomic_write_text(path, text + "\n")


def atomic_savefig(fig, path: str | Path, **savefig_kw) -> Path:
    """Save a matplotlib figure as PNG atomically (rendered to memory, then
    :func:`atomic_write_bytes`); no ``Software`` metadata, so the bytes do not
    name the matplotlib version."""
    import io

    buf = io.BytesIO()
    kw = dict(format="png", metadata={"Software": None})
    kw.update(savefig_kw)
    fig.savefig(buf, **kw)
    return atomic_write_bytes(path, buf.getvalue())
