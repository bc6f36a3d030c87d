"""Writing an output file the way pdsp does: checked before anything is written, filled under a
temporary name, fsynced and renamed, so a crash never leaves a half-written file at the path
and an input is never overwritten. Every writer of the package (data sets now; models,
predictions later) goes through `atomic_output`; a command that writes several files gathers
them in an `OutputSet`, so that it leaves all of them or none."""
import contextlib
import os
import tempfile


class OutputError(ValueError):
    """One line: `path: why it cannot be written there`."""


def check_output(path, inputs=()):
    """Raises OutputError (one line) when `path` cannot be a new output: a directory, in a folder
    that does not exist or takes no new file, the same file as one of `inputs`, or inside an
    input folder."""
    if os.path.isdir(path):
        raise OutputError(f"{path}: is a directory, not an output file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OutputError(f"{path}: the folder {folder} does not exist")
    for source in inputs:
        if _same_file(path, source):
            raise OutputError(f"{path}: refusing to overwrite the input {source}")
        if os.path.isdir(source) and _inside(path, source):
            raise OutputError(f"{path}: refusing to write inside the input folder {source}")
    # Tried, not inferred from permissions: root passes every permission test, yet cannot
    # create files in /proc or on a read-only file system.
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".pdsp-probe-"):
            pass
    except OSError as error:
        raise OutputError(f"{path}: cannot write in {folder}: {error.strerror or error}") from None


def _same_file(a, b):
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def _inside(path, folder):
    return os.path.realpath(path).startswith(os.path.join(os.path.realpath(folder), ""))


class OutputSet:
    """The files of one command: each written under a temporary name, and renamed to its path
    only when `commit` is called after every one was written; otherwise `discard` removes them
    and the paths keep what they held before."""

    def __init__(self):
        self._pending = []  # (temporary, path)

    def add(self, temporary, path):
        self._pending.append((temporary, path))

    def written(self, path):
        """Where the file for `path` is until the set commits."""
        return next(temporary for temporary, pending in self._pending if pending == path)

    def commit(self):
        for temporary, path in self._pending:
            os.replace(temporary, path)
        self._pending = []

    def discard(self):
        for temporary, _ in self._pending:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temporary)
        self._pending = []


@contextlib.contextmanager
def output_set():
    """Yields an OutputSet for atomic_output(..., into=it): all its files land, or none."""
    outputs = OutputSet()
    try:
        yield outputs
        outputs.commit()
    except BaseException:
        outputs.discard()
        raise


@contextlib.contextmanager
def atomic_output(path, inputs=(), into=None):
    """Yields the temporary name to write; on success the file is synced and renamed to `path`
    (with `into`, an OutputSet, renamed when the set commits), on failure the temporary file is
    removed and the exception goes on."""
    check_output(path, inputs)
    temporary = f"{path}.tmp.{os.getpid()}"
    try:
        yield temporary
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        if into is None:
            os.replace(temporary, path)
        else:
            into.add(temporary, path)
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        if isinstance(error, OSError) and not isinstance(error, OutputError):
            raise OutputError(f"{path}: cannot be written: {error.strerror or error}") from None
        raise
