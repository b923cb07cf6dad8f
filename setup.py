"""The compiled parts of simjudge; the rest is in pyproject.toml.

The arm's IK step (``envs/_dls.c``), the OPD metrics' sums over an episode
(``judges/metrics/_opd.c``) and the recorder's packed rows (``judges/_rowpack.c``).
-ffp-contract=off: no fused multiply-adds, so their arithmetic, and with it every trajectory
and score, is the same on every x86-64 CPU (see each module's header comment).
"""

from setuptools import Extension, setup

FLAGS = ["-O2", "-ffp-contract=off", "-fno-fast-math"]

setup(
    ext_modules=[
        Extension(
            "simjudge.envs._dls",
            sources=["envs/_dls.c"],
            extra_compile_args=FLAGS,
        ),
        Extension(
            "simjudge.judges.metrics._opd",
            sources=["judges/metrics/_opd.c"],
            extra_compile_args=FLAGS,
        ),
        Extension(
            "simjudge.judges._rowpack",
            sources=["judges/_rowpack.c"],
            extra_compile_args=FLAGS,
        ),
    ]
)
