"""Compares the tensor sizes memgraph/onnx inferred (a graph JSON written
by onnxgraph) with ONNX's own shape inference (Debian's python3-onnx) on
the same model with the same input dims, over the main graph's tensors
ONNX resolves to a static shape. A development check, not run by CI.

usage: python3 crosscheck.py MODEL.onnx GRAPH.json [NAME=VALUE | TENSOR[K]=VALUE]...
prints: agree N, differ N (each named), unresolved-by-onnx N
"""
import json
import re
import sys

import onnx

src, gpath, dims = sys.argv[1], sys.argv[2], sys.argv[3:]
given = {}
for d in dims:
    k, v = d.split('=')
    given[k] = int(v)
m = onnx.load(src)
inits = {t.name for t in m.graph.initializer}
for inp in m.graph.input:
    if inp.name in inits:
        continue
    for k, d in enumerate(inp.type.tensor_type.shape.dim):
        key = '%s[%d]' % (inp.name, k)
        v = given.get(key, given.get(d.dim_param) if d.dim_param else None)
        if v is not None:
            d.ClearField('dim_param')
            d.dim_value = v
m = onnx.shape_inference.infer_shapes(m)
bits = {1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64, 12: 32, 13: 64, 16: 16}
onnx_bytes = {}
for v in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
    tt = v.type.tensor_type
    if not tt.HasField('shape') or tt.elem_type not in bits:
        continue
    if not all(d.HasField('dim_value') for d in tt.shape.dim):
        continue
    n = 1
    for d in tt.shape.dim:
        n *= d.dim_value
    onnx_bytes[v.name] = (n * bits[tt.elem_type] + 7) // 8
g = json.load(open(gpath))
agree, differ, unresolved = 0, [], 0
for t in g['tensors']:
    if t['id'] not in onnx_bytes:
        unresolved += 1
    elif onnx_bytes[t['id']] == t['bytes']:
        agree += 1
    else:
        differ.append((t['id'], t['bytes'], onnx_bytes[t['id']]))
print('agree %d, differ %d, unresolved-by-onnx %d' % (agree, len(differ), unresolved))
for d in differ:
    print('  differ: %s memgraph %d onnx %d' % d)
