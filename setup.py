"""The one compiled part of simjudge: the arm's IK step (``envs/_dls.c``); the rest is in pyproject.toml.

-ffp-contract=off: no fused multiply-adds, so the step's arithmetic, and with it every
trajectory, is the same on every x86-64 CPU (see the module's header comment).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "simjudge.envs._dls",
            sources=["envs/_dls.c"],
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math"],
        )
    ]
)
