#!/usr/bin/env python3
"""Writes the torch.export fixtures in testdata/pt2/.

Real archives (from ../shared/corpus, made by torch 2.11) are copied with their weight files
dropped: tpu-doctor never reads weights, and the copies stay small. The hand-made programs and
the broken archives exercise what no real export shows: an op PyTorch/XLA does not lower, a
convolution network, `.item()`, and hostile zip files.

Usage: python3 scripts/gen_pt2_fixtures.py [CORPUS_DIR]   (default ../shared/corpus/models)
"""
import json
import struct
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "testdata" / "pt2"


def strip_weights(src: Path, dst: Path) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            if "/data/weights/weight_" in info.filename or "/data/constants/tensor_" in info.filename:
                continue
            if info.filename.endswith("sample_inputs/model.pt"):
                continue
            zout.writestr(info.filename, zin.read(info.filename))


def meta(dtype, sizes):
    out = []
    for s in sizes:
        if isinstance(s, int):
            out.append({"as_int": s})
        else:
            out.append({"as_expr": {"expr_str": s, "hint": {"as_int": 8}}})
    return {"dtype": dtype, "sizes": out, "requires_grad": False,
            "device": {"type": "cpu", "index": None}, "layout": 7}


def node(target, name, inputs, outputs, line, module=""):
    stack = f'File "model.py", line {line}, in forward\n    ...'
    md = {"stack_trace": stack}
    if module:
        md["nn_module_stack"] = f"L__self__,,Net;L__self__{module},{module},torch.nn.modules.conv.Conv2d"
    return {"target": target, "name": name, "inputs": inputs, "outputs": outputs,
            "metadata": md, "is_hop_single_tensor_return": None}


def t(arg, name):
    return {"name": arg, "arg": {"as_tensor": {"name": name}}, "kind": 1}


def ints(arg, v):
    return {"name": arg, "arg": {"as_ints": v}, "kind": 1}


def i(arg, v):
    return {"name": arg, "arg": {"as_int": v}, "kind": 1}


def program(tensors, params, user, nodes, outputs):
    specs = [{"parameter": {"arg": {"name": p}, "parameter_name": p.replace("p_", "").replace("_", ".")}}
             for p in params]
    specs += [{"user_input": {"arg": {"as_tensor": {"name": u}}}} for u in user]
    return {
        "graph_module": {
            "graph": {"inputs": [{"as_tensor": {"name": n}} for n in params + user],
                      "outputs": [{"as_tensor": {"name": o}} for o in outputs],
                      "nodes": nodes, "tensor_values": tensors, "sym_int_values": {},
                      "sym_bool_values": {}, "sym_float_values": {}, "custom_obj_values": {},
                      "is_single_tensor_return": True},
            "signature": {"input_specs": specs,
                          "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": o}}}}
                                           for o in outputs]},
            "module_call_graph": [], "metadata": {}, "treespec_namedtuple_fields": {}},
        "opset_version": {"aten": 10}, "range_constraints": {"s0": {"min_val": 2, "max_val": 512}},
        "schema_version": {"major": 8, "minor": 17}, "verifiers": [], "torch_version": "2.11.0",
        "guards_code": []}


def write_pt2(path: Path, prog, root="model") -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{root}/archive_format", "pt2")
        z.writestr(f"{root}/archive_version", "0")
        z.writestr(f"{root}/models/model.json", json.dumps(prog))


def convnet():
    """conv(3→64, 3x3) → relu → max_pool 2 → adaptive avg pool → linear(64→10), dynamic batch s0."""
    F = 7
    tensors = {
        "p_conv_weight": meta(F, [64, 3, 3, 3]), "p_conv_bias": meta(F, [64]),
        "p_fc_weight": meta(F, [10, 64]), "p_fc_bias": meta(F, [10]),
        "x": meta(F, ["s0", 3, 224, 224]), "conv2d": meta(F, ["s0", 64, 224, 224]),
        "relu": meta(F, ["s0", 64, 224, 224]), "max_pool2d": meta(F, ["s0", 64, 112, 112]),
        "pool": meta(F, ["s0", 64, 1, 1]), "flat": meta(F, ["s0", 64]), "fc": meta(F, ["s0", 10]),
    }
    nodes = [
        node("torch.ops.aten.conv2d.default", "conv2d",
             [t("input", "x"), t("weight", "p_conv_weight"), t("bias", "p_conv_bias"),
              ints("stride", [1, 1]), ints("padding", [1, 1])], [{"as_tensor": {"name": "conv2d"}}],
             12, "conv"),
        node("torch.ops.aten.relu.default", "relu", [t("self", "conv2d")],
             [{"as_tensor": {"name": "relu"}}], 13),
        node("torch.ops.aten.max_pool2d.default", "max_pool2d",
             [t("self", "relu"), ints("kernel_size", [2, 2])],
             [{"as_tensor": {"name": "max_pool2d"}}], 14),
        node("torch.ops.aten.adaptive_avg_pool2d.default", "pool",
             [t("self", "max_pool2d"), ints("output_size", [1, 1])],
             [{"as_tensor": {"name": "pool"}}], 15),
        node("torch.ops.aten.flatten.using_ints", "flat", [t("self", "pool"), i("start_dim", 1)],
             [{"as_tensor": {"name": "flat"}}], 16),
        node("torch.ops.aten.linear.default", "fc",
             [t("input", "flat"), t("weight", "p_fc_weight"), t("bias", "p_fc_bias")],
             [{"as_tensor": {"name": "fc"}}], 17),
    ]
    return program(tensors, ["p_conv_weight", "p_conv_bias", "p_fc_weight", "p_fc_bias"], ["x"],
                   nodes, ["fc"])


def fallback_and_item():
    """An op PyTorch/XLA does not lower (aten.histc) and a `.item()` read."""
    F = 7
    tensors = {"x": meta(F, [8, 128]), "histc": meta(F, [10]), "sum": meta(F, [])}
    nodes = [
        node("torch.ops.aten.histc.default", "histc", [t("self", "x"), i("bins", 10)],
             [{"as_tensor": {"name": "histc"}}], 21),
        node("torch.ops.aten.sum.default", "sum", [t("self", "x")],
             [{"as_tensor": {"name": "sum"}}], 22),
        node("torch.ops.aten.item.default", "item", [t("self", "sum")],
             [{"as_sym_float": {"as_name": "zuf0"}}], 23),
    ]
    return program(tensors, [], ["x"], nodes, ["histc"])


def attention_block():
    """q/k/v projections, scaled_dot_product_attention over 8 heads, an output projection."""
    F, B, L, E, H = 13, "s0", 128, 512, 8  # bfloat16
    D = E // H
    tensors = {"x": meta(F, [B, L, E])}
    nodes = []
    for p in ("q", "k", "v", "o"):
        tensors[f"p_{p}_weight"] = meta(F, [E, E])
    for i, p in enumerate(("q", "k", "v")):
        tensors[f"{p}_lin"] = meta(F, [B, L, E])
        tensors[f"{p}_heads"] = meta(F, [B, L, H, D])
        tensors[f"{p}_t"] = meta(F, [B, H, L, D])
        nodes.append(node("torch.ops.aten.linear.default", f"{p}_lin",
                          [t("input", "x"), t("weight", f"p_{p}_weight")],
                          [{"as_tensor": {"name": f"{p}_lin"}}], 30 + i))
        nodes.append(node("torch.ops.aten.view.default", f"{p}_heads",
                          [t("self", f"{p}_lin"), ints("size", [-1, L, H, D])],
                          [{"as_tensor": {"name": f"{p}_heads"}}], 30 + i))
        nodes.append(node("torch.ops.aten.transpose.int", f"{p}_t",
                          [t("self", f"{p}_heads"), i_("dim0", 1), i_("dim1", 2)],
                          [{"as_tensor": {"name": f"{p}_t"}}], 30 + i))
    tensors["attn"] = meta(F, [B, H, L, D])
    nodes.append(node("torch.ops.aten.scaled_dot_product_attention.default", "attn",
                      [t("query", "q_t"), t("key", "k_t"), t("value", "v_t")],
                      [{"as_tensor": {"name": "attn"}}], 34))
    tensors["attn_t"] = meta(F, [B, L, H, D])
    tensors["merged"] = meta(F, [B, L, E])
    tensors["out"] = meta(F, [B, L, E])
    nodes.append(node("torch.ops.aten.transpose.int", "attn_t",
                      [t("self", "attn"), i_("dim0", 1), i_("dim1", 2)],
                      [{"as_tensor": {"name": "attn_t"}}], 35))
    nodes.append(node("torch.ops.aten.reshape.default", "merged",
                      [t("self", "attn_t"), ints("shape", [-1, L, E])],
                      [{"as_tensor": {"name": "merged"}}], 35))
    nodes.append(node("torch.ops.aten.linear.default", "out",
                      [t("input", "merged"), t("weight", "p_o_weight")],
                      [{"as_tensor": {"name": "out"}}], 36))
    return program(tensors, [f"p_{p}_weight" for p in ("q", "k", "v", "o")], ["x"], nodes, ["out"])


def cond_program(divergent=False):
    """torch.cond(x.sum() > 0, true_fn, false_fn, (x,)): true doubles x; false adds one, or (when
    `divergent`) keeps only the first row, so the branches' shapes differ."""
    F = 7
    tensors = {"x": meta(F, [8, 16]), "sum": meta(F, []), "gt": meta(12, []), "cond": meta(F, [8, 16])}

    def branch(name, body_op, out_shape):
        bt = {"x_1": meta(F, [8, 16]), "y": meta(F, out_shape)}
        if body_op == "mul":
            bn = [node("torch.ops.aten.mul.Tensor", "y", [t("self", "x_1"),
                                                         {"name": "other", "arg": {"as_float": 2.0}, "kind": 1}],
                       [{"as_tensor": {"name": "y"}}], 41)]
        elif body_op == "add":
            bn = [node("torch.ops.aten.add.Tensor", "y", [t("self", "x_1"),
                                                         {"name": "other", "arg": {"as_float": 1.0}, "kind": 1}],
                       [{"as_tensor": {"name": "y"}}], 43)]
        else:
            bn = [node("torch.ops.aten.slice.Tensor", "y", [t("self", "x_1"), i("dim", 0), i("start", 0),
                                                            i("end", 1)],
                       [{"as_tensor": {"name": "y"}}], 43)]
        return {"name": name, "graph": {"inputs": [{"as_tensor": {"name": "x_1"}}],
                                        "outputs": [{"as_tensor": {"name": "y"}}], "nodes": bn,
                                        "tensor_values": bt, "sym_int_values": {}, "sym_bool_values": {},
                                        "is_single_tensor_return": True}}
    nodes = [
        node("torch.ops.aten.sum.default", "sum", [t("self", "x")], [{"as_tensor": {"name": "sum"}}], 40),
        node("torch.ops.aten.gt.Scalar", "gt", [t("self", "sum"), i("other", 0)],
             [{"as_tensor": {"name": "gt"}}], 40),
        node("torch.ops.higher_order.cond", "cond",
             [t("pred", "gt"),
              {"name": "true_fn", "arg": {"as_graph": branch("true_graph_0", "mul", [8, 16])}, "kind": 1},
              {"name": "false_fn", "arg": {"as_graph": branch("false_graph_0", "slice" if divergent else "add",
                                                                [1, 16] if divergent else [8, 16])},
               "kind": 1},
              {"name": "operands", "arg": {"as_tensors": [{"name": "x"}]}, "kind": 1}],
             [{"as_tensors": [{"name": "cond"}]}], 40),
    ]
    return program(tensors, [], ["x"], nodes, ["cond"])


def i_(arg, v):
    return i(arg, v)


def hostile(name: str) -> bytes:
    """Archives a reader must refuse without extracting anything."""
    good = json.dumps(convnet()).encode()
    path = OUT / name
    if name == "bad_dotdot.pt2":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("model/models/model.json", good)
            z.writestr("../../evil.txt", "x")
    elif name == "bad_absolute.pt2":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("/etc/evil/models/model.json", good)
    elif name == "bad_bomb.pt2":
        # 64 MiB of spaces deflates to ~64 KiB: a 1000x ratio no model.json has.
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
            z.writestr("model/models/model.json", b" " * (64 << 20))
    elif name == "bad_claims_gigabytes.pt2":
        # A 40-byte member whose headers claim 4 GiB - 1 uncompressed.
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            z.writestr("model/models/model.json", b"{}" * 20)
        data = bytearray(path.read_bytes())
        for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
            at = data.find(sig)
            struct.pack_into("<I", data, at + off, 0xFFFFFFFF - 1)
        path.write_bytes(bytes(data))
    elif name == "bad_truncated.pt2":
        write_pt2(path, convnet())
        path.write_bytes(path.read_bytes()[:300])
    elif name == "bad_no_program.pt2":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("model/archive_format", "pt2")
    elif name == "bad_deep_json.pt2":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("model/models/model.json", "[" * 100000 + "]" * 100000)
    elif name == "bad_json.pt2":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("model/models/model.json", good[: len(good) // 2])
    return path.read_bytes()


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "models"
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("mlp_dynamic_batch", "mlp_static", "nonzero_mask", "f64_mlp"):
        strip_weights(corpus / "pt2" / f"{name}.pt2", OUT / f"{name}.pt2")
    for name in ("torch_export_linear_dynbatch", "torch_export_nonzero"):
        strip_weights(corpus / "samples" / f"{name}.pt2", OUT / f"{name}.pt2")
    write_pt2(OUT / "convnet_dynamic_batch.pt2", convnet())
    write_pt2(OUT / "fallback_and_item.pt2", fallback_and_item())
    write_pt2(OUT / "attention_block.pt2", attention_block())
    write_pt2(OUT / "cond_static.pt2", cond_program())
    write_pt2(OUT / "cond_divergent.pt2", cond_program(divergent=True))
    (OUT / "convnet_program.json").write_text(json.dumps(convnet(), indent=1))
    for bad in ("bad_dotdot.pt2", "bad_absolute.pt2", "bad_bomb.pt2", "bad_claims_gigabytes.pt2",
                "bad_truncated.pt2", "bad_no_program.pt2", "bad_deep_json.pt2", "bad_json.pt2"):
        hostile(bad)


if __name__ == "__main__":
    main()
