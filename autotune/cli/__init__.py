"""The command line: argparse -> requests -> pipeline -> report."""
from autotune.cli.main import main

__all__ = ["main"]
