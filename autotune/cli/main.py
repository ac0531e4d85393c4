"""The `autotune` command line.  main(argv) is callable in-process (tests do)."""
from __future__ import annotations

import argparse
import gc
import importlib
import sys

from autotune.cli.options import SUBCOMMANDS
from autotune.cli.progress import ConsoleProgress
from autotune.errors import InputError, ToolError

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


def build_parser(complete: bool = False) -> argparse.ArgumentParser:
    """The whole command line; a subcommand's options are added when it is used (complete=True:
    now, for a caller that inspects them)."""
    ap = _Parser(prog="autotune", description=__doc__)
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
