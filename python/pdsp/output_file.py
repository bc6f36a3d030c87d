"""Writing an output file the way pdsp does: checked before anything is written, filled under a
temporary name, fsynced and renamed, so a crash never leaves a half-written file at the path
and an input is never overwritten. Every writer of the package (data sets now; models,
predictions later) goes through `atomic_output`."""
import contextlib
import os


class OutputError(ValueError):
    """One line: `path: why it cannot be written there`."""


def check_output(path, inputs=()):
    """Raises OutputError (one line) when `path` cannot be a new output: a directory, in a folder
    that does not exist, or the same file as one of `inputs`."""
    if os.path.isdir(path):
        raise OutputError(f"{path}: is a directory, not an output file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OutputError(f"{path}: the folder {folder} does not exist")
    for source in inputs:
        if _same_file(path, source):
            raise OutputError(f"{path}: refusing to overwrite the input {source}")


def _same_file(a, b):
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


@contextlib.contextmanager
def atomic_output(path, inputs=()):
    """Yields the temporary name to write; on success the file is synced and renamed to `path`,
    on failure the temporary file is removed and the exception goes on."""
    check_output(path, inputs)
    temporary = f"{path}.tmp.{os.getpid()}"
    try:
        yield temporary
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise
