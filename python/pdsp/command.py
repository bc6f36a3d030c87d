"""Running the pdsp executable from Python: finding it, wrapping it in `mpirun -np N` the way
docs/guide.md "Clusters and MPI" says, following a run while it goes, and turning a failure into a
`PdspError` that carries pdsp's one-line message."""
import numbers
import os
import shutil
import signal
import subprocess
import tempfile
import time


class PdspError(RuntimeError):
    """pdsp exited with an error. `str(error)` is pdsp's one-line message (without its
    `pdsp: error: ` prefix); `returncode` its exit code (2: bad input or usage), `output` its
    whole standard error."""

    def __init__(self, message, returncode, output):
        super().__init__(message)
        self.returncode = returncode
        self.output = output


ERROR_PREFIX = "pdsp: error: "


def _usable(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def find_executable(explicit=None):
    """The pdsp to run: `explicit`, else $PDSP, else the one installed beside this package, else
    `pdsp` on PATH, else a build in the checkout this package lies in."""
    if explicit:  # a path the caller named is not silently swapped for another pdsp
        if not _usable(explicit):
            raise FileNotFoundError(f"{explicit}: no pdsp executable there")
        return os.path.abspath(explicit)
    candidates = [os.environ.get("PDSP")]
    try:
        from ._installed import PDSP_EXECUTABLE  # written by `cmake --install`
        candidates.append(PDSP_EXECUTABLE)
    except ImportError:
        pass
    candidates.append(shutil.which("pdsp"))
    checkout = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    candidates.append(os.path.join(checkout, "build", "release", "pdsp"))
    for candidate in candidates:
        if _usable(candidate):
            return os.path.abspath(candidate)
    raise FileNotFoundError("no pdsp executable: install pdsp, put it on PATH or set $PDSP")


def launch_command(pdsp, arguments, ranks=1, threads=0, mpirun="mpirun", mpirun_args=()):
    """The command line and environment for `pdsp ARGUMENTS` on `ranks` MPI ranks. Ranks are not
    bound to one core (each runs `threads` threads); more ranks than cores oversubscribe, with
    passive OpenMP waits so spinning threads do not steal the cores."""
    for name, value, least in (("ranks", ranks, 1), ("threads", threads, 0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
            raise ValueError(f"{name}: {value!r} is not a whole number >= {least}")
    command, env = [pdsp] + list(arguments), dict(os.environ)
    cores = os.cpu_count() or 1
    if ranks > 1:
        launcher = [mpirun, "--bind-to", "none"]
        if ranks > cores:
            launcher.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            launcher.append("--allow-run-as-root")
        command = launcher + list(mpirun_args) + ["-np", str(ranks)] + command
    if ranks * max(threads, 1) > cores:
        env["OMP_WAIT_POLICY"] = "passive"
    return command, env


def run_pdsp(command, env, echo=False, follow=None, poll_seconds=0.5):
    """Runs `command`; pdsp's output goes to the console when `echo`, else it is kept and
    dropped. `follow()` is called every `poll_seconds` while it runs (the progress display).
    Returns pdsp's standard output; raises PdspError when it fails. Ctrl-C stops pdsp first."""
    with tempfile.TemporaryFile("w+") as errors, tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(command, env=env, stdout=None if echo else output,
                                   stderr=errors, text=True)
        try:
            while process.poll() is None:
                if follow:
                    follow()
                time.sleep(poll_seconds)
        except KeyboardInterrupt:
            process.send_signal(signal.SIGINT)  # pdsp writes what it has and exits
            process.wait()
            raise
        if follow:
            follow()
        errors.seek(0)
        output.seek(0)
        stderr, stdout = errors.read(), output.read()
    if echo and stderr:
        print(stderr, end="", flush=True)
    if process.returncode != 0:
        raise PdspError(error_line(stderr, process.returncode), process.returncode, stderr)
    return stdout


def error_line(stderr, returncode):
    """pdsp's one-line error from its standard error (printed once, by the lowest failing rank
    under mpirun), else the last line anything (mpirun) printed."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(ERROR_PREFIX):
            return line[len(ERROR_PREFIX):]
    if lines:
        return lines[-1]
    return f"pdsp exited with code {returncode} and printed no error"
