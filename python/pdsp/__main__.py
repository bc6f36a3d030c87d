"""`python3 -m pdsp COMMAND`: the package's command-line tools.

    python3 -m pdsp plot run.jsonl [more.jsonl ...] -o run.png

Errors are one line on stderr and exit code 1."""
import argparse
import sys

from .plot import PlotError, plot_runs


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m pdsp")
    commands = parser.add_subparsers(dest="command", required=True)
    plot = commands.add_parser("plot", help="draw F, D, the gap, the step and the validation "
                               "error of runs against seconds and iterations")
    plot.add_argument("metrics", nargs="+", help="pdsp train --metrics files (JSON lines)")
    plot.add_argument("-o", "--out", required=True, help="the picture to write (.png, .pdf, .svg)")
    arguments = parser.parse_args(argv)
    try:
        plot_runs(arguments.metrics, arguments.out)
    except PlotError as error:
        print(f"pdsp plot: {error}", file=sys.stderr)
        return 1
    print(f"wrote {arguments.out} ({len(arguments.metrics)} run"
          f"{'s' if len(arguments.metrics) > 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
