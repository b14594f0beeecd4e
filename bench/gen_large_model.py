#!/usr/bin/python3
"""Writes a synthetic ONNX model with about N nodes for the speed benchmark.

A stack of transformer-like blocks (MatMul, Add, Relu, Mul, Reshape, Transpose, Softmax,
LayerNormalization) on a symbolic batch, weights as absent external data — the shape of the real
corpus models, only longer.  Usage: gen_large_model.py NODES OUT.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper

NODES_PER_BLOCK = 10


def weight(name, shape):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(shape)
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="weights.bin")
    return t


def main():
    nodes_wanted, out = int(sys.argv[1]), sys.argv[2]
    d = 256
    nodes, inits = [], []
    shape_4d = helper.make_tensor("shape_4d", TensorProto.INT64, [4], [0, 0, 4, 64])
    shape_3d = helper.make_tensor("shape_3d", TensorProto.INT64, [3], [0, 0, d])
    inits += [shape_4d, shape_3d]
    x = "x"
    for b in range(max(1, nodes_wanted // NODES_PER_BLOCK)):
        p = f"b{b}_"
        inits += [weight(p + "w1", [d, d]), weight(p + "b1", [d]), weight(p + "g", [d]), weight(p + "beta", [d])]
        nodes += [
            helper.make_node("LayerNormalization", [x, p + "g", p + "beta"], [p + "ln"], axis=-1, name=p + "ln"),
            helper.make_node("MatMul", [p + "ln", p + "w1"], [p + "mm"], name=p + "mm"),
            helper.make_node("Add", [p + "mm", p + "b1"], [p + "add"], name=p + "add"),
            helper.make_node("Reshape", [p + "add", "shape_4d"], [p + "heads"], name=p + "split_heads"),
            helper.make_node("Transpose", [p + "heads"], [p + "t"], perm=[0, 2, 1, 3], name=p + "t"),
            helper.make_node("Softmax", [p + "t"], [p + "sm"], axis=-1, name=p + "softmax"),
            helper.make_node("Transpose", [p + "sm"], [p + "t2"], perm=[0, 2, 1, 3], name=p + "t2"),
            helper.make_node("Reshape", [p + "t2", "shape_3d"], [p + "merged"], name=p + "merge_heads"),
            helper.make_node("Relu", [p + "merged"], [p + "relu"], name=p + "relu"),
            helper.make_node("Add", [p + "relu", x], [p + "out"], name=p + "residual"),
        ]
        x = p + "out"
    graph = helper.make_graph(nodes, "large", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 128, d])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", 128, d])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tpu-doctor-bench")
    model.ir_version = 8
    onnx.save(model, out)


if __name__ == "__main__":
    main()
