"""quasim for Python.

- quasim.client: ask quasimd which config to launch a kernel with
  (standard library only).
- quasim.tune_kernel / quasim.run_kernel: Kernel Tuner's interface for
  OpenCL kernels, tuned on this machine's device by quasim (`quasimctl
  bench live`), so a Kernel Tuner script moves by its import alone.
"""

from quasim.client import Client, Result, Span, SpanRecorder, default_socket, sockets, SYSTEM_SOCKET


def tune_kernel(*args, **kwargs):
    """Kernel Tuner's tune_kernel: see quasim.interface.tune_kernel."""
    from quasim import interface

    return interface.tune_kernel(*args, **kwargs)


def run_kernel(*args, **kwargs):
    """Kernel Tuner's run_kernel: see quasim.interface.run_kernel."""
    from quasim import interface

    return interface.run_kernel(*args, **kwargs)


def export_spec(*args, **kwargs):
    """Write a kernel as a quasimd spec: see quasim.interface.export_spec."""
    from quasim import interface

    return interface.export_spec(*args, **kwargs)


def build_kernel(*args, **kwargs):
    """Build a kernel with the config quasimd serves: see quasim.build.build_kernel."""
    from quasim import build

    return build.build_kernel(*args, **kwargs)


__all__ = ["export_spec", "build_kernel", "Client", "Result", "Span", "SpanRecorder", "default_socket", "sockets", "SYSTEM_SOCKET",
           "tune_kernel", "run_kernel"]
