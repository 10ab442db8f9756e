"""Kernel Tuner's tune_kernel arguments as a quasim spec directory: spec.yaml
(JSON, which YAML reads), the source, and each array argument and answer as
a .npy file. Every check that can fail here does, naming the argument, so
that nothing is tuned with input that cannot work."""

import itertools
import json
import os
import re

DTYPES = {"float32": "float", "float64": "double", "int8": "char", "uint8": "uchar", "int16": "short",
          "uint16": "ushort", "int32": "int", "uint32": "uint", "int64": "long", "uint64": "ulong"}
DIMS = ["problem_size_x", "problem_size_y", "problem_size_z"]
# A generated source is tried for each config of the product, at most this many.
MAX_GENERATED = 20000


def _little(a, dtype):
    """a as a flat little-endian array of dtype, a copy only where one is
    needed (the arguments are often hundreds of MB)."""
    return numpy().ascontiguousarray(a).ravel().astype(dtype.newbyteorder("<"), copy=False)


def numpy():
    try:
        import numpy as np
    except ImportError as e:
        raise ImportError("quasim.tune_kernel needs numpy (Debian: apt-get install python3-numpy)") from e
    return np


def read_source(kernel_source, tune_params):
    """The kernel's source text and any files it includes, from a string, a
    filename, a list of filenames (the first is compiled, the others are
    beside it for #include) or a function of the config (see generated)."""
    if callable(kernel_source):
        return generated(kernel_source, tune_params), {}
    files = kernel_source if isinstance(kernel_source, (list, tuple)) else None
    if files is None and isinstance(kernel_source, str) and "\n" not in kernel_source and os.path.isfile(kernel_source):
        files = [kernel_source]
    if files is None:
        if not isinstance(kernel_source, str):
            raise TypeError("kernel_source: a %s; want the source, a filename, a list of filenames or a function"
                            % type(kernel_source).__name__)
        if "\n" not in kernel_source and re.fullmatch(r"[\w./-]+\.\w+", kernel_source):
            raise ValueError("kernel_source: no such file: %r" % kernel_source)
        return kernel_source, {}
    texts = []
    for i, f in enumerate(files):
        try:
            with open(f) as fh:
                texts.append(fh.read())
        except OSError as e:
            raise ValueError("kernel_source[%d]: %s" % (i, e)) from e
    return texts[0], {os.path.basename(f): t for f, t in zip(files[1:], texts[1:])}


def generated(gen, tune_params):
    """A generator's sources as one: each distinct source under #if over the
    parameters it depends on (numbers only, as the preprocessor compares)."""
    names = list(tune_params)
    configs = list(itertools.product(*tune_params.values()))
    if len(configs) > MAX_GENERATED:
        raise ValueError("kernel_source: a function over %d configs; quasim asks it for each, at most %d"
                         % (len(configs), MAX_GENERATED))
    sources = {}
    for c in configs:
        src = gen(dict(zip(names, c)))
        if not isinstance(src, str):
            raise TypeError("kernel_source: the function returned a %s, not the source" % type(src).__name__)
        sources.setdefault(src, []).append(c)
    if len(sources) == 1:
        return next(iter(sources))
    out = []
    for k, (cond, src) in enumerate(_conditions(sources, tune_params, "kernel_source", "the generated source")):
        out.append("#%s %s\n%s\n" % ("if" if k == 0 else "elif", cond, src))
    return "".join(out) + "#endif\n"


def _conditions(variants, tune_params, field, what):
    """[(condition, text)]: for texts that each hold for some configs (a
    dict of text to configs, value tuples in tune_params' order), the
    preprocessor condition over the parameters the text depends on that
    selects it (numbers only, as the preprocessor compares)."""
    names = list(tune_params)
    deps = [i for i, n in enumerate(names)
            if any(len({c[i] for c in cs}) < len(tune_params[n]) for cs in variants.values())]
    for i in deps:
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in tune_params[names[i]]):
            raise ValueError("%s: %s depends on tune_params[%r], whose values are not all numbers: the "
                             "preprocessor cannot choose between them" % (field, what, names[i]))
    out = []
    for text, cs in variants.items():
        conds = sorted({" && ".join("%s == %r" % (names[i], c[i]) for i in deps) for c in cs})
        out.append((" || ".join("(%s)" % x for x in conds), text))
    return out


def replace_params(text, params):
    """Kernel Tuner's replace_param_occurrences: each token of text that
    names a parameter becomes its value."""
    return "".join(str(params[p]) if p in params else p for p in re.split(r"([a-zA-Z0-9_]+)", text))


def define_values(defines, params):
    """Kernel Tuner's defines= for one config (params): each name's text,
    a function of the config called, a string with the parameters' names
    replaced by their values, anything else as str; newlines escaped."""
    if not isinstance(defines, dict):
        raise TypeError("defines: a %s; want a dict of names to values or functions of the config"
                        % type(defines).__name__)
    out = {}
    for k, v in defines.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise ValueError("defines[%r]: not a valid identifier" % (k,))
        if callable(v):
            try:
                v = v(dict(params))
            except Exception as e:
                raise ValueError("defines[%r]: failed on %r: %s: %s" % (k, params, type(e).__name__, e)) from e
        elif isinstance(v, str):
            v = replace_params(v, params)
        out[k] = str(v).replace("\n", "\\\n")
    return out


def defines_block(defines, tune_params, block_size_names=None):
    """The source's first lines for Kernel Tuner's defines=: quasim's
    worker defines grid_size_x/y/z, the block sizes, every parameter and
    kernel_tuner before the source; with defines= Kernel Tuner defines
    only the names given, so these lines choose each config's defines
    (by the parameters, while they are defined), undefine the worker's,
    and define the user's."""
    names = list(tune_params)
    configs = list(itertools.product(*tune_params.values()))
    if len(configs) > MAX_GENERATED:
        raise ValueError("defines: asked for each of %d configs, at most %d" % (len(configs), MAX_GENERATED))
    variants = {}
    for c in configs:
        vals = define_values(defines, dict(zip(names, c)))
        text = "".join("#undef %s\n#define %s %s\n" % (k, k, v) for k, v in vals.items())
        variants.setdefault(text, []).append(c)
    worker = ["grid_size_x", "grid_size_y", "grid_size_z"]
    worker += [b for b in (block_size_names or ["block_size_x", "block_size_y", "block_size_z"]) if str(b).isidentifier()]
    worker += names + ["kernel_tuner"]
    undef = "".join("#undef %s\n" % n for n in dict.fromkeys(worker))
    if len(variants) == 1:
        return undef + next(iter(variants)) + "#line 1\n"
    sel = "QUASIM_DEFINES_CASE"
    cases = _conditions(variants, tune_params, "defines", "a define")
    out = []
    for k, (cond, _) in enumerate(cases):
        out.append("#%s %s\n#define %s %d\n" % ("if" if k == 0 else "elif", cond, sel, k))
    out.append("#endif\n" + undef)
    for k, (_, text) in enumerate(cases):
        out.append("#%s %s == %d\n%s" % ("if" if k == 0 else "elif", sel, k, text))
    out.append("#endif\n#undef %s\n#line 1\n" % sel)
    return "".join(out)


def kernel_params(src, name):
    """The parameter names of __kernel name in src, or None."""
    m = re.search(r"__kernel\s+(?:__attribute__\s*\(\(.*?\)\)\s*)?void\s+" + re.escape(name) + r"\s*\(([^)]*)\)", src, re.S)
    if not m:
        return None
    return [re.findall(r"\w+", p)[-1] if re.findall(r"\w+", p) else "" for p in m.group(1).split(",")]


def detect_lang(src):
    """Kernel Tuner's detection: CUDA has __global__, OpenCL __kernel."""
    if "__global__" in src:
        return "CUDA"
    if "__kernel" in src:
        return "OpenCL"
    return "C"


def _value(v, field):
    np = numpy()
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError("%s: %r is not a number, bool or string" % (field, v))


def _expr(e, field):
    if callable(e):
        raise TypeError("%s: a function; quasim takes expressions (strings) or numbers here" % field)
    np = numpy()
    if isinstance(e, (int, np.integer)) and not isinstance(e, bool):
        return str(int(e))
    if isinstance(e, str) and e.strip():
        return e
    raise TypeError("%s: %r; want an expression (a string) or an integer" % (field, e))


def problem(problem_size):
    """problem_dims, the problem, and problem_size as expressions."""
    np = numpy()
    ps = problem_size
    if isinstance(ps, (int, np.integer, str)) or callable(ps):
        ps = [ps]
    if not isinstance(ps, (list, tuple)) or not 1 <= len(ps) <= 3:
        raise ValueError("problem_size: %r; want an integer, an expression or 1 to 3 of them" % (problem_size,))
    dims, sizes, exprs = [], [], []
    for i, e in enumerate(ps):
        f = "problem_size[%d]" % i if len(ps) > 1 or isinstance(problem_size, (list, tuple)) else "problem_size"
        if isinstance(e, (int, np.integer)) and not isinstance(e, bool):
            if e <= 0:
                raise ValueError("%s: %d; want a positive size" % (f, e))
            dims.append(DIMS[i])
            sizes.append(int(e))
            exprs.append(DIMS[i])
        else:
            exprs.append(_expr(e, f))
    if not dims:  # the problem is all in the parameters: one nominal dim
        dims, sizes = [DIMS[0]], [1]
    return dims, sizes, exprs


def write(d, kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
          grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None, lang=None, device=0, platform=0,
          compiler_options=None, block_size_names=None, name=None, base="kernel", defines=None):
    """Writes the spec into directory d, as base.yaml with base.cl and
    base.*.npy beside it; returns the spec as a dict."""
    np = numpy()
    if not isinstance(kernel_name, str) or not re.fullmatch(r"[A-Za-z_]\w*", kernel_name):
        raise ValueError("kernel_name: %r is not a kernel's name" % (kernel_name,))
    if not isinstance(tune_params, dict) or not tune_params:
        raise ValueError("tune_params: want a dict of parameter names to lists of values")
    params = {}
    for k, vs in tune_params.items():
        if not isinstance(k, str) or not re.fullmatch(r"[A-Za-z_]\w*", k):
            raise ValueError("tune_params: %r is not a name usable as a define" % (k,))
        if isinstance(vs, (str, bytes)) or not hasattr(vs, "__iter__"):
            raise TypeError("tune_params[%r]: want a list of values" % k)
        vs = [_value(v, "tune_params[%r][%d]" % (k, i)) for i, v in enumerate(vs)]
        if not vs:
            raise ValueError("tune_params[%r]: no values" % k)
        params[k] = vs
    src, extra = read_source(kernel_source, params)
    lang = lang or detect_lang(src)
    block = defines_block(defines, params, block_size_names) if defines is not None else ""
    if str(lang).lower() != "opencl":
        raise ValueError("lang: %r; quasim tunes OpenCL kernels on this machine (CUDA and HIP need their device, "
                         "which quasim does not drive yet)" % (lang,))
    if platform not in (0, None):
        raise ValueError("platform: %r; quasim picks the device by index among all platforms (device=)" % (platform,))
    dims, sizes, exprs = problem(problem_size)
    for dim in dims:
        if dim in params:
            raise ValueError("tune_params[%r]: the name quasim gives a problem dim" % dim)
    names = kernel_params(src, kernel_name)
    if names is None:
        raise ValueError("kernel_name: no __kernel void %s(...) in the source" % kernel_name)
    if not isinstance(arguments, (list, tuple)):
        raise TypeError("arguments: want a list of numpy arrays and numpy scalars")
    if len(names) != len(arguments):
        raise ValueError("arguments: %d given, but %s takes %d" % (len(arguments), kernel_name, len(names)))
    if answer is not None and len(answer) != len(arguments):
        raise ValueError("answer: %d entries, the arguments %d" % (len(answer), len(arguments)))
    args = []
    os.makedirs(d, exist_ok=True)
    for i, a in enumerate(arguments):
        f = "arguments[%d]" % i
        an = answer[i] if answer is not None else None
        e = {"name": names[i] or "arg%d" % i}
        if isinstance(a, np.ndarray):
            t = DTYPES.get(a.dtype.name)
            if t is None:
                raise TypeError("%s: dtype %s is not supported (quasim takes %s)" % (f, a.dtype, ", ".join(DTYPES)))
            if a.size == 0:
                raise ValueError("%s: an empty array" % f)
            e.update(type=t, size=str(a.size))
            flat = _little(a, a.dtype)
            if flat.view(np.uint8).any():
                e["data"] = "%s.arg%d.npy" % (base, i)
                np.save(os.path.join(d, e["data"]), flat)
            else:
                # All bits zero (not -0.0): no file to write, hash and
                # read back; output buffers often start so.
                e["fill"] = "zero"
            if an is not None:
                if not isinstance(an, np.ndarray):
                    raise TypeError("answer[%d]: a %s for an array argument; want a numpy array" % (i, type(an).__name__))
                if an.size != a.size:
                    raise ValueError("answer[%d]: %d elements, %s %d" % (i, an.size, f, a.size))
                if not np.can_cast(a.dtype, an.dtype):
                    raise TypeError("answer[%d]: dtype %s, and %s is %s" % (i, an.dtype, f, a.dtype))
                e.update(output=True, answer="%s.answer%d.npy" % (base, i))
                np.save(os.path.join(d, e["answer"]), _little(an, a.dtype))
            elif verify is not None and answer is None:
                e["output"] = True
        elif isinstance(a, np.generic):
            t = DTYPES.get(a.dtype.name)
            if t is None:
                raise TypeError("%s: dtype %s is not supported (quasim takes %s)" % (f, a.dtype, ", ".join(DTYPES)))
            e.update(type=t, value=repr(a.item()))
            if an is not None and not isinstance(an, np.generic):
                raise TypeError("answer[%d]: want None or a numpy scalar for a scalar argument" % i)
        else:
            raise TypeError("%s: a %s; want a numpy array or a numpy scalar (numpy.int32(n), not n)" % (f, type(a).__name__))
        args.append(e)
    with open(os.path.join(d, base + ".cl"), "w") as fh:
        fh.write(block + src)
    for fname, text in extra.items():
        with open(os.path.join(d, fname), "w") as fh:
            fh.write(text)
    opts = list(compiler_options or [])
    if extra:
        opts.append("-I" + os.path.abspath(d))
    ocl = {"source": base + ".cl", "kernel": kernel_name, "options": opts, "tune_params": params, "problem_size": exprs}
    for axis, g in zip("xyz", (grid_div_x, grid_div_y, grid_div_z)):
        if g is not None:
            g = g if isinstance(g, (list, tuple)) else [g]
            ocl["grid_div_" + axis] = [_expr(x, "grid_div_%s[%d]" % (axis, j)) for j, x in enumerate(g)]
    if block_size_names is not None:
        ocl["block_size_names"] = [str(b) for b in block_size_names]
    ocl["args"] = args
    if answer is not None and any(a.get("answer") for a in args):
        ocl["check"] = {"compare": "allclose", "tolerance": {"abs": float(atol), "rel": 1e-5}}
    if device:
        ocl["device"] = {"index": int(device)}
    spec = {"name": name or kernel_name, "evaluator": "opencl", "problem_dims": dims,
            "problems": [",".join(map(str, sizes))], "opencl": ocl, "constraints": constraints(restrictions, params)}
    rewrite(d, spec, base)
    return spec


# Configs a restriction function leaves out become constraints, at most this many.
MAX_EXCLUDED = 5000


def constraints(restrictions, params):
    """Restrictions as the spec's constraints: strings as written; a
    function of the config (a dict) is asked for each config of the
    product, and the configs it rejects are left out one by one."""
    if restrictions is None:
        return []
    rs = restrictions if isinstance(restrictions, (list, tuple)) else [restrictions]
    out, fns = [], []
    for i, r in enumerate(rs):
        if callable(r):
            fns.append((i, r))
        elif isinstance(r, str):
            out.append(r)
        else:
            raise TypeError("restrictions[%d]: a %s; want an expression (a string) or a function of the config"
                            % (i, type(r).__name__))
    if fns:
        names = list(params)
        n = 1
        for vs in params.values():
            n *= len(vs)
        if n > MAX_GENERATED:
            raise ValueError("restrictions[%d]: a function over %d configs; quasim asks it for each, at most %d"
                             % (fns[0][0], n, MAX_GENERATED))
        for c in itertools.product(*params.values()):
            cfg = dict(zip(names, c))
            for i, f in fns:
                try:
                    ok = f(cfg)
                except Exception as e:
                    raise ValueError("restrictions[%d]: failed on %r: %s: %s" % (i, cfg, type(e).__name__, e)) from e
                if not ok:
                    out.append("not (%s)" % " and ".join("%s == %r" % kv for kv in cfg.items()))
                    break
            if len(out) > MAX_EXCLUDED:
                raise ValueError("restrictions[%d]: rejects over %d configs; write it as an expression (a string)"
                                 % (fns[0][0], MAX_EXCLUDED))
    return out


def rewrite(d, spec, base="kernel"):
    with open(os.path.join(d, base + ".yaml"), "w") as fh:
        json.dump(spec, fh, indent=1)
        fh.write("\n")


def exclude(d, spec, cached):
    """Leaves configs a cache already holds out of the space (resuming)."""
    tp = spec["opencl"]["tune_params"]
    lits = {n: {str(v): v for v in vs} for n, vs in tp.items()}
    for k in cached:
        parts = k.split(",")
        if len(parts) != len(tp) or any(p not in lits[n] for n, p in zip(tp, parts)):
            continue  # a config of other values: not in this space anyway
        spec["constraints"].append("not (%s)" % " and ".join(
            "%s == %r" % (n, lits[n][p]) for n, p in zip(tp, parts)))
    rewrite(d, spec)
