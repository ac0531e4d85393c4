"""The `autotune` command line.  main(argv) is callable in-process (tests do)."""
from __future__ import annotations

import argparse
import gc
import importlib
import sys
import warnings

from autotune.cli.options import SUBCOMMANDS
from autotune.cli.progress import ConsoleProgress
from autotune.errors import InputError, InputWarning, ToolError

# the module that runs a subcommand, imported only for the command that runs (default: commands)
HANDLERS = {"list": "autotune.cli.listing"}


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line errors of the rest of the command: `autotune: error: ...`,
    exit status 2, no usage block (the subcommands' parsers are of this class too)."""

    def error(self, message: str):
        self.exit(2, f"autotune: error: {' '.join(message.split())}\n")


class _Subparser(_Parser):
    """A subcommand's parser that adds its options (`build`) the first time it parses or shows
    its help: building every subcommand's options would import what only one of them needs."""

    def __init__(self, *args, build=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._build = build

    def _built(self):
        if self._build is not None:
            build, self._build = self._build, None
            build(self)
        return self

    def parse_known_args(self, args=None, namespace=None):
        self._built()
        return super().parse_known_args(args, namespace)

    def format_help(self):
        self._built()
        return super().format_help()

    def format_usage(self):
        self._built()
        return super().format_usage()


DESCRIPTION = """\
Pick the implementation variants of a parallel iterated Runge-Kutta (PIRK) solver that will run
fastest on a cluster, before running them: every variant of the IVP's kernels and communication
is priced by the ECM model (kerncraft) and fitted communication costs, ranked, and the few worth
it are generated, built and timed for real (tune)."""

EPILOG = """\
start with:
  autotune list ivps                          the shipped IVPs (and machines, methods)
  autotune rank --ivp heat2d --nodes 8        rank every variant on the default machine
  autotune explain --ivp heat2d --variant V   where one variant's predicted time goes
  autotune calibrate --node --name here       a machine file of this host, measured
  autotune tune --ivp heat2d --machine here   build and time the pre-selected variants

`autotune COMMAND --help` lists a command's options; docs/usage.md has them all, and the
environment variables the tool reads."""


class _Version(argparse.Action):
    """--version: this package's version and the analysis libraries' (looked up only when asked)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib import metadata

        def version(name: str) -> str:
            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                return "not installed"
        python = ".".join(map(str, sys.version_info[:3]))
        print(f"autotune {version('autotune')} (kerncraft {version('kerncraft')}, osaca {version('osaca')}, "
              f"Python {python})")
        parser.exit(0)


def build_parser(complete: bool = False) -> argparse.ArgumentParser:
    """The whole command line; a subcommand's options are added when it is used (complete=True:
    now, for a caller that inspects them)."""
    ap = _Parser(prog="autotune", description=DESCRIPTION, epilog=EPILOG,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action=_Version, help="print the versions of autotune and its analysis libraries")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Subparser)
    for name, (text, build) in SUBCOMMANDS.items():
        parser = sub.add_parser(name, help=text, build=build)
        if complete:
            parser._built()
    return ap


def flag(field: str | None) -> str | None:
    """The option that sets a request field: threads -> --threads, min_bytes -> --min-bytes."""
    return None if field is None else "--" + field.replace("_", "-")


def main(argv: list[str] | None = None) -> int:
    # a short-lived process that builds hundreds of thousands of small acyclic objects in a
    # sweep: the cycle collector's frequent young-generation passes cost a third of a warm
    # sweep and find nothing.  The library leaves the collector alone; the program tunes it.
    gc.set_threshold(200_000, 50, 100)
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None) -> None:
            """An InputWarning as one line, "autotune: warning: ..."; any other as Python shows it."""
            if issubclass(category, InputWarning):
                print(f"autotune: warning: {message}", file=sys.stderr)
            else:
                shown(message, category, filename, lineno, file, line)
        warnings.showwarning = show
        return _run(args)


def _run(args) -> int:
    try:
        handler = importlib.import_module(HANDLERS.get(args.command, "autotune.cli.commands"))
        return handler.dispatch(args, ConsoleProgress(args.command))
    except InputError as e:
        print(f"autotune: error: {e.named(flag(e.field))}", file=sys.stderr)
        return 2
    except ToolError as e:
        print(f"autotune: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("autotune: interrupted (finished analyses are kept in the store)", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
