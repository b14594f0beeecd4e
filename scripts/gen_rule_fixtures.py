#!/usr/bin/python3
"""Writes the small ONNX models of testdata/rules/CODE/ (one firing or silent case each).

Run with Debian's python3-onnx: /usr/bin/python3 scripts/gen_rule_fixtures.py
The outputs are committed; tests never run this script.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "rules")
F32, F64, F16, I64, STR, C128, BF16 = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16,
                                       TensorProto.INT64, TensorProto.STRING, TensorProto.COMPLEX128,
                                       TensorProto.BFLOAT16)


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const_i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(code, name, nodes, inputs, outputs, inits=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="tpu-doctor-fixtures")
    model.ir_version = 8
    os.makedirs(os.path.join(ROOT, code), exist_ok=True)
    onnx.save(model, os.path.join(ROOT, code, name + ".onnx"))


def weights(name, dtype, shape):
    """An initializer with external data that does not exist, like the corpus models."""
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(shape)
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="weights.bin")
    return t


# ---- TPU001 unsupported-dtype ----
# (its 64-bit rewrite gaps are hand-written XLA programs: fires_bitcast_f64_to_s64.mlir,
# fires_f64_tpu_custom_call.hlo)
save("TPU001", "fires_complex128",
     [helper.make_node("Identity", ["z"], ["y"], name="id")],
     [vi("z", C128, [4])], [vi("y", C128, [4])])
save("TPU001", "silent_f32",
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
     [vi("x", F32, [8, 16])], [vi("y", F32, [8, 4])], [weights("w", F32, [16, 4])])

# ---- TPU002 slow-dtype ----
# float64: XLA:TPU computes it as float32 pairs (and fires_f64_compare_and_math.mlir; a float64
# that only feeds comparisons is silent_f64_compare_only.mlir).
save("TPU002", "fires_f64_input",
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
     [vi("x", F64, [8, 16])], [vi("y", F64, [8, 4])], [weights("w", F64, [16, 4])])
save("TPU002", "fires_cast_to_f64",
     [helper.make_node("Cast", ["x"], ["xd"], to=F64, name="to_double"),
      helper.make_node("Mul", ["xd", "xd"], ["y"], name="square")],
     [vi("x", F32, [4, 4])], [vi("y", F64, [4, 4])])
save("TPU002", "fires_f16",
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
     [vi("x", F16, [8, 16])], [vi("y", F16, [8, 4])], [weights("w", F16, [16, 4])])
save("TPU002", "fires_int64_arith",
     [helper.make_node("Add", ["ids", "offset"], ["shifted"], name="shift_ids"),
      helper.make_node("Gather", ["table", "shifted"], ["emb"], name="embed")],
     [vi("ids", I64, [8, 128])], [vi("emb", F32, [8, 128, 64])],
     [const_i64("offset", [2]), weights("table", F32, [1000, 64])])
save("TPU002", "silent_int64_indices_only",
     [helper.make_node("Gather", ["table", "ids"], ["emb"], name="embed")],
     [vi("ids", I64, [8, 128])], [vi("emb", F32, [8, 128, 64])], [weights("table", F32, [1000, 64])])
save("TPU002", "silent_bf16",
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
     [vi("x", BF16, [8, 16])], [vi("y", BF16, [8, 4])], [weights("w", BF16, [16, 4])])

# ---- TPU003 unsupported-op ----
save("TPU003", "fires_string_op",
     [helper.make_node("StringNormalizer", ["text"], ["norm"], case_change_action="LOWER", name="lower")],
     [vi("text", STR, [4])], [vi("norm", STR, [4])])
seq_out = helper.make_tensor_value_info("cat", F32, [8, 4])
save("TPU003", "fires_sequence",
     [helper.make_node("SequenceConstruct", ["a", "b"], ["seq"], name="make_list"),
      helper.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=0, name="cat_list")],
     [vi("a", F32, [4, 4]), vi("b", F32, [4, 4])], [seq_out])
save("TPU003", "fires_custom_domain",
     [helper.make_node("FancyGelu", ["x"], ["y"], domain="com.example", name="fancy"),
      helper.make_node("FancyGelu", ["y"], ["z"], domain="com.example", name="fancy_2")],
     [vi("x", F32, [4, 4])], [vi("z", F32, [4, 4])], extra_opsets=[("com.example", 1)])
save("TPU003", "silent_standard_ops",
     [helper.make_node("Sin", ["x"], ["s"], name="sin"),
      helper.make_node("Erf", ["s"], ["y"], name="erf")],
     [vi("x", F32, [4, 4])], [vi("y", F32, [4, 4])])

# ---- SHP001 data-dependent-shape ----
save("SHP001", "fires_nonzero",
     [helper.make_node("Greater", ["x", "zero"], ["mask"], name="positive"),
      helper.make_node("NonZero", ["mask"], ["idx"], name="where_positive"),
      helper.make_node("Transpose", ["idx"], ["idx_t"], name="t"),
      helper.make_node("GatherND", ["x", "idx_t"], ["picked"], name="pick")],
     [vi("x", F32, [16, 16])], [vi("picked", F32, None)],
     [numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")])
save("SHP001", "fires_reshape_runtime_shape",
     [helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape_to_input_values")],
     [vi("x", F32, [4, 6]), vi("target", I64, [2])], [vi("y", F32, None)])
save("SHP001", "fires_topk_runtime_k",
     [helper.make_node("ReduceMax", ["counts"], ["kmax"], keepdims=1, name="max_count"),
      helper.make_node("TopK", ["scores", "kmax"], ["vals", "inds"], name="top")],
     [vi("scores", F32, [1, 100]), vi("counts", I64, [1])], [vi("vals", F32, None), vi("inds", I64, None)])
save("SHP001", "silent_reshape_from_shape",
     [helper.make_node("Shape", ["x"], ["sx"], name="shape"),
      helper.make_node("Gather", ["sx", "zero_idx"], ["b"], axis=0, name="batch_size"),
      helper.make_node("Unsqueeze", ["b", "axes0"], ["b1"], name="unsq"),
      helper.make_node("Concat", ["b1", "minus_one"], ["target"], axis=0, name="target_shape"),
      helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten"),
      helper.make_node("TopK", ["y", "k"], ["vals", "inds"], name="top5")],
     [vi("x", F32, ["batch", 3, 8, 8])], [vi("vals", F32, ["batch", 5]), vi("inds", I64, ["batch", 5])],
     [const_i64("zero_idx", 0), const_i64("axes0", [0]), const_i64("minus_one", [-1]), const_i64("k", [5])])

# ---- SHP002 symbolic-dims ----
save("SHP002", "fires_symbolic_batch",
     [helper.make_node("Relu", ["x"], ["y"], name="relu")],
     [vi("x", F32, ["batch", "sequence", 64])], [vi("y", F32, ["batch", "sequence", 64])])
unknown_in = vi("x", F32, [4, 64])
unknown_in.type.tensor_type.shape.dim[0].Clear()
save("SHP002", "fires_unknown_input_dim",
     [helper.make_node("Relu", ["x"], ["y"], name="relu")], [unknown_in], [vi("y", F32, None)])
save("SHP002", "silent_static",
     [helper.make_node("Relu", ["x"], ["y"], name="relu")],
     [vi("x", F32, [8, 64])], [vi("y", F32, [8, 64])])

# ---- CF001 data-dependent-control-flow ----
def branch(name, shape, op="Relu"):
    return helper.make_graph([helper.make_node(op, ["x"], [name + "_out"], name=name + "_op")], name,
                             [], [vi(name + "_out", F32, shape)])


cond_nodes = [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0, name="sum"),
              helper.make_node("Greater", ["total", "zero"], ["cond"], name="is_positive")]
zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
save("CF001", "fires_if_same_shapes",
     cond_nodes + [helper.make_node("If", ["cond"], ["y"], name="branch",
                                    then_branch=branch("then", [4, 4]), else_branch=branch("else", [4, 4], "Neg"))],
     [vi("x", F32, [4, 4])], [vi("y", F32, [4, 4])], [zero])
shrink = helper.make_graph(
    [helper.make_node("Slice", ["x", "s0", "s2"], ["else_out"], name="first_two_rows")], "else", [],
    [vi("else_out", F32, [2, 4])], initializer=[const_i64("s0", [0]), const_i64("s2", [2])])
save("CF001", "fires_if_different_shapes",
     cond_nodes + [helper.make_node("If", ["cond"], ["y"], name="branch",
                                    then_branch=branch("then", [4, 4]), else_branch=shrink)],
     [vi("x", F32, [4, 4])], [vi("y", F32, None)], [zero])


def loop_body(with_scan):
    outputs = [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F32, [4])]
    nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
             helper.make_node("Add", ["acc_in", "x"], ["acc_out"], name="accumulate")]
    if with_scan:
        nodes.append(helper.make_node("Identity", ["acc_out"], ["step_out"], name="record"))
        outputs.append(vi("step_out", F32, [4]))
    return helper.make_graph(nodes, "body",
                             [vi("i", I64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", F32, [4])],
                             outputs)


true_const = numpy_helper.from_array(np.array(True), "true")
save("CF001", "fires_loop_runtime_trip_scan",
     [helper.make_node("Loop", ["steps", "true", "init"], ["acc", "trace"], body=loop_body(True), name="loop")],
     [vi("x", F32, [4]), vi("steps", I64, []), vi("init", F32, [4])],
     [vi("acc", F32, [4]), vi("trace", F32, None)], [true_const])
save("CF001", "fires_loop_runtime_trip_no_scan",
     [helper.make_node("Loop", ["steps", "true", "init"], ["acc"], body=loop_body(False), name="loop")],
     [vi("x", F32, [4]), vi("steps", I64, []), vi("init", F32, [4])], [vi("acc", F32, [4])], [true_const])
save("CF001", "silent_loop_static_trip",
     [helper.make_node("Loop", ["steps", "true", "init"], ["acc", "trace"], body=loop_body(True), name="loop")],
     [vi("x", F32, [4]), vi("init", F32, [4])], [vi("acc", F32, [4]), vi("trace", F32, [10, 4])],
     [true_const, const_i64("steps", 10)])
print("fixtures written under", os.path.normpath(ROOT))

# ---- Bad inputs (testdata/bad/): every one must give exit 2 and one line on stderr ----
BAD = os.path.join(os.path.dirname(ROOT), "bad")
os.makedirs(BAD, exist_ok=True)


def save_bad(name, model):
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(model.SerializeToString())


cycle = helper.make_graph(
    [helper.make_node("Add", ["x", "b"], ["a"], name="first"), helper.make_node("Relu", ["a"], ["b"], name="second")],
    "cycle", [vi("x", F32, [4])], [vi("b", F32, [4])])
save_bad("cycle.onnx", helper.make_model(cycle, opset_imports=[helper.make_opsetid("", 17)]))
huge = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "huge",
                         [vi("x", F32, [2**62, 2**62])], [vi("y", F32, [2**62, 9223372036854775807])],
                         initializer=[weights("w", F32, [2**62, 9223372036854775807])])
save_bad("huge_dims.onnx", helper.make_model(huge, opset_imports=[helper.make_opsetid("", 17)]))
escape = weights("w", F32, [4, 4])
escape.external_data[0].value = "../../etc/passwd"
outside = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "outside",
                            [vi("x", F32, [4, 4])], [vi("y", F32, [4, 4])], initializer=[escape])
save_bad("external_outside.onnx", helper.make_model(outside, opset_imports=[helper.make_opsetid("", 17)]))
dangling = helper.make_graph([helper.make_node("Relu", ["nowhere"], ["y"], name="relu")], "dangling",
                             [vi("x", F32, [4])], [vi("y", F32, [4])])
save_bad("dangling_input.onnx", helper.make_model(dangling, opset_imports=[helper.make_opsetid("", 17)]))
with open(os.path.join(ROOT, "..", "models", "resnet50.onnx"), "rb") as f:
    full = f.read()
with open(os.path.join(BAD, "truncated.onnx"), "wb") as f:
    f.write(full[: len(full) // 2])
with open(os.path.join(BAD, "random.onnx"), "wb") as f:
    f.write(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes())
open(os.path.join(BAD, "empty.onnx"), "wb").close()

# ---- MEM001 over-hbm ----
save("MEM001", "fires_weights_exceed_hbm",
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="huge_fc")],
     [vi("x", F32, [8, 65536])], [vi("y", F32, [8, 65536])], [weights("w", F32, [65536, 65536])])
save("MEM001", "silent_fits",
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
     [vi("x", F32, [8, 1024])], [vi("y", F32, [8, 1024])], [weights("w", F32, [1024, 1024])])

# ---- PERF001 tile-padding ----
save("PERF001", "fires_minor_dim_3",
     [helper.make_node("MatMul", ["pts", "w"], ["feat"], name="point_mlp")],
     [vi("pts", F32, [16, 8192, 3])], [vi("feat", F32, [16, 8192, 128])], [weights("w", F32, [3, 128])])
save("PERF001", "silent_minor_dim_128",
     [helper.make_node("MatMul", ["pts", "w"], ["feat"], name="point_mlp")],
     [vi("pts", F32, [16, 128, 8192])], [vi("feat", F32, [16, 128, 128])], [weights("w", F32, [8192, 128])])

# ---- PERF002 mxu-utilization ----
save("PERF002", "fires_narrow_output",
     [helper.make_node("Gemm", ["x", "w"], ["y"], transB=0, name="classifier")],
     [vi("x", F32, [64, 300])], [vi("y", F32, [64, 10])], [weights("w", F32, [300, 10])])
save("PERF002", "silent_tile_multiples",
     [helper.make_node("Gemm", ["x", "w"], ["y"], transB=0, name="fc")],
     [vi("x", F32, [64, 256])], [vi("y", F32, [64, 128])], [weights("w", F32, [256, 128])])

# ---- PERF003 batch-multiple ----
save("PERF003", "fires_batch_12",
     [helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F32, [12, 256])], [vi("y", F32, [12, 256])])
save("PERF003", "silent_batch_16",
     [helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F32, [16, 256])], [vi("y", F32, [16, 256])])
# A static batch under 8 in the file is the export's example input, not the batch the model trains
# or serves with; a rank-1 input has no batch dim at all.
save("PERF003", "silent_example_batch_2",
     [helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F32, [2, 256])], [vi("y", F32, [2, 256])])
save("PERF003", "silent_vector_input",
     [helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", F32, [12])], [vi("y", F32, [12])])
