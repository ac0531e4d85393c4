import pytest

from autotune.errors import InputError
from autotune.tools.launcher import parse_launcher


def test_default_and_presets_build_argv():
    cmd = ["python", "-m", "benchmarks_mpi.allgather"]
    assert parse_launcher(None).argv(4, cmd) == ["mpiexec", "-n", "4"] + cmd
    assert parse_launcher("srun").argv(8, cmd, nodes=8) == ["srun", "-N", "8", "-n", "8"] + cmd
    custom = parse_launcher("srun -N {nodes} -n {procs} --ntasks-per-node={ppn} --cpu-bind=cores")
    assert " ".join(custom.argv(16, ["x"], nodes=4)) == "srun -N 4 -n 16 --ntasks-per-node=4 --cpu-bind=cores x"
    assert parse_launcher("mpirun -np {procs} --oversubscribe").argv(2, ["a b"]) == \
        ["mpirun", "-np", "2", "--oversubscribe", "a b"]


@pytest.mark.parametrize("bad", ["mpiexec -n 4", "mpiexec -n {procs} {cores}", "mpiexec 'unclosed {procs}", ""])
def test_bad_templates(bad):
    with pytest.raises(InputError):
        parse_launcher(bad if bad else " ")
