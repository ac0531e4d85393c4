"""Shared fixtures.  The kerncraft results are slow: one session store holds them."""
from __future__ import annotations

import json
import os
import tempfile

import pytest

# machine files made by tests (calibrate --node) go to a scratch dir, never the user's
os.environ["AUTOTUNE_MACHINES"] = tempfile.mkdtemp(prefix="autotune-test-machines-")

from autotune.cli.main import main


def run_cli(capsys, *argv):
    """Run `autotune argv` in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="session")
def session_store(tmp_path_factory):
    return tmp_path_factory.mktemp("store") / "store.sqlite"


@pytest.fixture(scope="session")
def cold_heat2d(session_store):
    """A cold `rank --ivp heat2d --nodes 8 --format json` on a fresh store (real kerncraft)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["rank", "--ivp", "heat2d", "--nodes", "8", "--format", "json",
                     "--store", str(session_store)])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue()), err.getvalue()
