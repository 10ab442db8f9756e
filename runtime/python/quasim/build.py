"""Kernels built with PyOpenCL as quasim's worker builds them: the
config's #define lines before the source (as Kernel Tuner writes them)
and the launch geometry of Kernel Tuner's rules. run_kernel uses it, and
build_kernel builds a kernel with the config quasimd serves."""

import math

from quasim import _spec

DEFAULT_BLOCK_NAMES = ["block_size_x", "block_size_y", "block_size_z"]


def _eval(e, params, field):
    if isinstance(e, str):
        try:
            return eval(e, {"__builtins__": {}}, dict(params))  # Kernel Tuner evaluates them so too
        except Exception as err:
            raise ValueError("%s: %r: %s" % (field, e, err)) from err
    return e


def geometry(problem_size, params, grid_div=(None, None, None), block_size_names=None):
    """(work-groups, work-group size), 3 dims each, as Kernel Tuner computes them."""
    names = list(block_size_names or DEFAULT_BLOCK_NAMES) + DEFAULT_BLOCK_NAMES[len(block_size_names or []):]
    block = []
    for d in range(3):
        n = names[d]
        block.append(int(params[n]) if n in params else int(n) if str(n).isdigit() else (256 if d == 0 else 1))
    ps = problem_size if isinstance(problem_size, (list, tuple)) else [problem_size]
    ps = [int(_eval(p, params, "problem_size")) for p in ps] + [1] * (3 - len(ps))
    groups = []
    for d in range(3):
        div = grid_div[d] if grid_div[d] is not None else [names[d]] if names[d] in params else []
        q = 1
        for j, e in enumerate(div):
            q *= int(_eval(e, params, "grid_div_%s[%d]" % ("xyz"[d], j)))
        groups.append(int(math.ceil(ps[d] / q)))
    return groups, block


def prefix(params, groups, block, block_size_names=None, defines=None):
    """The config's #define lines, in Kernel Tuner's order; with defines
    (Kernel Tuner's defines=), those alone."""
    if defines is not None:
        return "".join("#define %s %s\n" % kv for kv in _spec.define_values(defines, params).items()) + "#line 1\n"
    names = list(block_size_names or DEFAULT_BLOCK_NAMES)
    defs = {}
    for n, g in zip(("grid_size_x", "grid_size_y", "grid_size_z"), groups):
        defs[n] = g
    for n, b in zip(names, block):
        defs[n] = b
    for k, v in params.items():
        defs[k] = v
    defs["kernel_tuner"] = 1
    return "".join("#define %s %s\n" % (k, _define(v)) for k, v in defs.items()) + "#line 1\n"


def _define(v):
    if isinstance(v, bool):
        return str(int(v))
    return str(v)


def _pyopencl():
    try:
        import pyopencl
    except ImportError as e:
        raise ImportError("quasim.run_kernel and build_kernel need PyOpenCL (Debian: apt-get install python3-pyopencl)") from e
    return pyopencl


def _device(cl, device):
    devs = [d for p in cl.get_platforms() for d in p.get_devices()]
    if device >= len(devs):
        raise ValueError("device: %d; this machine has %d OpenCL devices" % (device, len(devs)))
    return devs[device]


def run_once(kernel_name, src, problem_size, arguments, params, grid_div, block_size_names, options, device,
             defines=None):
    """Builds and runs one config once; returns the arguments after the run."""
    np = _spec.numpy()
    cl = _pyopencl()
    groups, block = geometry(problem_size, params, grid_div, block_size_names)
    ctx = cl.Context([_device(cl, device or 0)])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, prefix(params, groups, block, block_size_names, defines) + src).build(
        options=list(options or []))
    k = getattr(prg, kernel_name)
    bufs = []
    for i, a in enumerate(arguments):
        if isinstance(a, np.ndarray):
            bufs.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a)))
        elif isinstance(a, np.generic):
            bufs.append(a)
        else:
            raise TypeError("arguments[%d]: a %s; want a numpy array or a numpy scalar" % (i, type(a).__name__))
    ndim = 3
    cl.enqueue_nd_range_kernel(q, k.set_args(*bufs) or k, [g * b for g, b in zip(groups, block)][:ndim], block[:ndim])
    out = []
    for a, b in zip(arguments, bufs):
        if isinstance(a, np.ndarray):
            r = np.empty_like(a)
            cl.enqueue_copy(q, r, b)
            out.append(r)
        else:
            out.append(a)
    q.finish()
    return out


class Built:
    """A kernel built with a served config: kernel (pyopencl.Kernel),
    global_size and local_size to launch it with (3 dims), the config, and
    the lookup's result (quasim.client.Result: its reason says why the
    defaults were used, if they were)."""

    def __init__(self, kernel, program, global_size, local_size, config, result):
        self.kernel, self.program = kernel, program
        self.global_size, self.local_size = global_size, local_size
        self.config, self.result = config, result


def build_kernel(context, source, kernel_name, problem, defaults, problem_size=None, grid_div_x=None,
                 grid_div_y=None, grid_div_z=None, block_size_names=None, compiler_options=None, name=None,
                 client=None):
    """Asks quasimd which config of spec `name` (default kernel_name) to run
    at problem (its dims, as the spec lists problems) and builds source with
    it in context, as quasim's worker built it when it tuned and certified
    it: its #define lines before the source and Kernel Tuner's launch
    geometry (problem_size, default the problem; grid_div_*;
    block_size_names, as given to tune_kernel). Without an answer from
    quasimd (no daemon, an unknown kernel), defaults is built; a launch
    is never blocked. Returns a Built."""
    cl = _pyopencl()
    from quasim.client import Client

    client = client or Client()
    res = client.lookup(name or kernel_name, list(problem), defaults)
    params = dict(defaults)
    params.update(res.config or {})
    groups, block = geometry(problem if problem_size is None else problem_size, params,
                             (grid_div_x, grid_div_y, grid_div_z), block_size_names)
    prg = cl.Program(context, prefix(params, groups, block, block_size_names) + source).build(
        options=list(compiler_options or []))
    return Built(getattr(prg, kernel_name), prg, [g * b for g, b in zip(groups, block)], block, params, res)
