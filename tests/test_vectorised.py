"""The generated solver's RHS loops vectorise as the code kerncraft analyses does, on an AVX2
target as on an AVX-512 one, and its max/min selects give the conditional expression's value."""
import re
import subprocess

import pytest

from autotune.codegen.solver import solver_source
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import Variant
from autotune.tools.build import find_mpicc
from autotune.tools.cpuprobe import enabled_options, missing_on_host

METHOD = load_method("radauIIA7")
# AVX2 without masked vectors: where GCC leaves a conditional expression a branch under
# -ftrapping-math (on an AVX-512 target it would vectorise the old selects too)
HASWELL = ("-march=haswell",)
AVX2 = ("-O3", *HASWELL, "-fopenmp")
FORMS = {"paper": Variant("jli", "neighbour"),
         "onepass": Variant("jl-onepass", "allgather", au="fused", pred="direct", buf="ghost", rhs="onepass"),
         "fused": Variant("jl-onepass", "neighbour", au="fused", pred="direct", buf="ghost", rhs="onepass",
                          fuse="rhs-lc", block="l1")}


def _called_functions_with_selects(src: str) -> dict[str, tuple[int, int]]:
    """Each function the solver calls whose body evaluates fmax or fmin: (first line, last line)
    of its definition, 1-based (the templates open a function at column 0 and close it there)."""
    lines = src.splitlines()
    out, name, first = {}, None, 0
    for i, line in enumerate(lines, 1):
        m = re.match(r"static void (\w+)\(", line)
        if m:
            name, first = m.group(1), i
        elif name and line == "}":
            body = "\n".join(lines[first - 1:i])
            if len(re.findall(rf"\b{name}\(", src)) > 1 and re.search(r"\bfm(ax|in)\(", body):
                out[name] = (first, i)
            name = None
    return out


@pytest.mark.parametrize("form", FORMS)
def test_every_rhs_loop_of_an_ivp_with_max_is_vectorised(form, compiler, mpiexec, tmp_path):
    """inverterchain's RHS clips with fmax: each function the solver calls that evaluates it has a
    loop the vectoriser reports done (an outer loop vectorised is reported at its inner loop's
    line; GCC before 9 says "note:" where later ones say "optimized:")."""
    cc = find_mpicc()
    if enabled_options(cc, HASWELL) is None:       # not GCC, or a compiler for another ISA
        pytest.skip("reads GCC's vectoriser report for an x86 target")
    src = solver_source(load_ivp("inverterchain"), METHOD, FORMS[form], 4096)
    (tmp_path / "solver.c").write_text(src)
    proc = subprocess.run([cc, *AVX2, "-fopt-info-vec-optimized", "-c", "solver.c", "-o", "solver.o"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    done = {int(m.group(1)) for m in re.finditer(r"solver\.c:(\d+):\d+: (?:optimized|note): loop vectorized",
                                                 proc.stderr)}
    functions = _called_functions_with_selects(src)
    assert functions, "no function with a select found"
    scalar = [name for name, (a, b) in functions.items() if not any(a <= line <= b for line in done)]
    assert not scalar, f"{form}: RHS left scalar: {scalar}"


def test_the_selects_give_the_conditional_expressions_value(compiler, tmp_path):
    """fmax and fmin as the solver defines them: bit for bit (a > b ? a : b) and (a < b ? a : b),
    signed zeros, infinities and NaN (quiet and signalling) included; the inputs read at run time
    and the selects in a loop the compiler vectorises (built for AVX2 on x86), the conditional
    expressions in a loop it does not touch."""
    src = solver_source(load_ivp("inverterchain"), METHOD, FORMS["paper"], 256)
    start, end = src.index("static inline double at_pick("), src.index("#define fmin(a, b)")
    selects = src[start:src.index("\n", end)]
    (tmp_path / "sel.c").write_text("\n".join([
        "#include <math.h>", "#include <stdint.h>", "#include <stdio.h>", "#include <string.h>", selects,
        "#define N 100",
        "static uint64_t bits(double v) { uint64_t u; memcpy(&u, &v, sizeof u); return u; }",
        "__attribute__((noinline)) static void picks(int n, const double *restrict a, const double *restrict b,",
        "                                            double *restrict hi, double *restrict lo) {",
        "  #pragma omp simd",
        "  for (int i = 0; i < n; i++) { hi[i] = fmax(a[i] + 0.0, b[i]); lo[i] = fmin(a[i], b[i] * 1.0); }",
        "}",
        "int main(void) {",
        "  uint64_t snan = 0x7ff0000000000001ull; double s; memcpy(&s, &snan, sizeof s);",
        "  volatile double v[] = {-INFINITY, -1.5, -0.0, 0.0, 1.5, INFINITY, NAN, -NAN, 0.0};",
        "  v[8] = s;",
        "  double a[N], b[N], hi[N], lo[N];",
        "  int n = 0, bad = 0;",
        "  for (int i = 0; i < 9; i++) for (int k = 0; k < 9; k++, n++) { a[n] = v[i]; b[n] = v[k]; }",
        "  picks(n, a, b, hi, lo);",
        "  for (int i = 0; i < n; i++) {",
        "    volatile double x = a[i] + 0.0, y = b[i], z = a[i], w = b[i] * 1.0;",
        "    bad += bits(hi[i]) != bits(x > y ? x : y);",
        "    bad += bits(lo[i]) != bits(z < w ? z : w);",
        "  }",
        "  printf(\"%d %d\\n\", n, bad);",
        "  return 0;",
        "}"]))
    flags = ["-O3", "-fopenmp"] + (list(HASWELL) if missing_on_host(HASWELL, compiler) == [] else [])
    subprocess.run([compiler, *flags, "sel.c", "-o", "sel"], cwd=tmp_path, check=True)
    pairs, bad = map(int, subprocess.run([str(tmp_path / "sel")], capture_output=True, text=True,
                                         check=True).stdout.split())
    assert (pairs, bad) == (81, 0)
