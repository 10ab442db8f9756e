"""Prepares an ONNX model for onnxgraph: fixes the input's shape, folds
constant computations into initializers (Constant nodes, and shape
arithmetic such as Shape -> Slice -> Concat on static shapes, as ONNX
Runtime's constant folding does) and runs ONNX shape inference, so that
every tensor has a static shape in value_info.

usage: python3 prepare.py IN.onnx OUT.onnx 1x3x640x640
"""
import sys
import numpy as np
import onnx
from onnx import numpy_helper, helper

src, dst = sys.argv[1], sys.argv[2]
dims = [int(x) for x in sys.argv[3].split('x')]
m = onnx.load(src)
inits = {t.name for t in m.graph.initializer}
inp = [i for i in m.graph.input if i.name not in inits]
assert len(inp) == 1, [i.name for i in inp]
for d, v in zip(inp[0].type.tensor_type.shape.dim, dims):
    d.ClearField('dim_param')
    d.dim_value = v


def attr(n, name, default=None):
    for a in n.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def fold(n, x, shapes):
    """The constant outputs of node n whose inputs x are constants, or None."""
    op = n.op_type
    if op == 'Constant':
        return [numpy_helper.to_array(attr(n, 'value'))]
    if op == 'Shape':
        s = shapes.get(n.input[0])
        return None if s is None else [np.array(s, dtype=np.int64)]
    if any(v is None for v in x):
        return None
    if op == 'Cast':
        return [x[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[attr(n, 'to')])]
    if op == 'Concat':
        return [np.concatenate(x, axis=attr(n, 'axis'))]
    if op == 'Unsqueeze':
        axes = attr(n, 'axes') if len(x) == 1 else list(x[1])
        r = x[0]
        for a in sorted(a % (r.ndim + len(axes)) for a in axes):
            r = np.expand_dims(r, a)
        return [r]
    if op == 'Squeeze':
        axes = attr(n, 'axes') if len(x) == 1 else list(x[1])
        return [np.squeeze(x[0], axis=tuple(axes) if axes is not None else None)]
    if op == 'Gather':
        return [np.take(x[0], x[1], axis=attr(n, 'axis', 0))]
    if op == 'Slice':
        if len(x) == 1:
            starts, ends, axes, steps = attr(n, 'starts'), attr(n, 'ends'), attr(n, 'axes'), None
        else:
            starts, ends = x[1], x[2]
            axes = x[3] if len(x) > 3 else None
            steps = x[4] if len(x) > 4 else None
        axes = list(range(len(starts))) if axes is None else list(axes)
        steps = [1] * len(starts) if steps is None else list(steps)
        sl = [slice(None)] * x[0].ndim
        for s, e, a, st in zip(starts, ends, axes, steps):
            sl[a] = slice(int(s), int(min(e, 2**62)) if e > 0 else int(e), int(st))
        return [x[0][tuple(sl)]]
    ops = {'Add': np.add, 'Sub': np.subtract, 'Mul': np.multiply}
    if op in ops:
        return [ops[op](x[0], x[1])]
    if op == 'Div' and x[0].dtype.kind in 'iu':
        return [x[0] // x[1]]
    if op == 'Reshape':
        s = [x[0].shape[i] if v == 0 else v for i, v in enumerate(x[1])]
        return [x[0].reshape(s)]
    return None


for _ in range(20):
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    shapes = {}
    for v in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        tt = v.type.tensor_type
        if tt.HasField('shape') and all(d.HasField('dim_value') for d in tt.shape.dim):
            shapes[v.name] = [d.dim_value for d in tt.shape.dim]
    const = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    keep, folded = [], 0
    for n in m.graph.node:
        out = fold(n, [const.get(i) for i in n.input], shapes)
        if out is None or len(out) != len(n.output):
            keep.append(n)
            continue
        for name, v in zip(n.output, out):
            const[name] = v
            m.graph.initializer.append(numpy_helper.from_array(np.asarray(v), name))
        folded += 1
    if folded == 0:
        break
    del m.graph.node[:]
    m.graph.node.extend(keep)
    # stale value_info of folded tensors would shadow nothing, but drop it
    names = set(const)
    vi = [v for v in m.graph.value_info if v.name not in names]
    del m.graph.value_info[:]
    m.graph.value_info.extend(vi)
onnx.save(m, dst)
