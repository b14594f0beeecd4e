#!/usr/bin/env python3
"""Writes the Keras fixtures in testdata/keras/.

Keras is not installed on the build machine, so these are written by hand in the exact shapes
Keras writes them: Keras 3 `config.json` (module/class_name/config/registered_name/build_config,
`__keras_tensor__` inbound nodes, DTypePolicy objects) and tf-keras 2 `to_json()` (nested-list
inbound nodes, plain or `Policy` dtypes). Also a few hostile archives.

Usage: python3 scripts/gen_keras_fixtures.py
"""
import json
import struct
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "testdata" / "keras"


def policy(name):
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name},
            "registered_name": None}


def layer3(cls, name, config, inbound=None, build_shape=None, dtype="float32", module="keras.layers",
           registered=None):
    cfg = {"name": name, "trainable": True, "dtype": policy(dtype)}
    cfg.update(config)
    out = {"module": module, "class_name": cls, "config": cfg, "registered_name": registered,
           "name": name}
    if build_shape is not None:
        out["build_config"] = {"input_shape": build_shape}
    if inbound is not None:
        out["inbound_nodes"] = inbound
    return out


def kt(layer, shape, dtype="float32", node=0, index=0):
    return {"class_name": "__keras_tensor__",
            "config": {"shape": shape, "dtype": dtype, "keras_history": [layer, node, index]}}


def call(*tensors, **kwargs):
    return [{"args": list(tensors), "kwargs": kwargs}]


def input3(name, shape, dtype="float32"):
    return {"module": "keras.layers", "class_name": "InputLayer",
            "config": {"batch_shape": shape, "dtype": dtype, "sparse": False, "name": name},
            "registered_name": None, "name": name, "inbound_nodes": []}


def functional3(name, layers, inputs, outputs, dtype="float32"):
    return {"module": "keras", "class_name": "Functional",
            "config": {"name": name, "trainable": True, "dtype": policy(dtype), "layers": layers,
                       "input_layers": inputs, "output_layers": outputs},
            "registered_name": "Functional", "build_config": {"input_shape": None}}


def cnn_mixed_bf16():
    """Keras 3 functional CNN under mixed_bfloat16: conv stem, separable and depthwise blocks,
    batch norm, a residual Add, global pooling, a classifier."""
    B = None
    P = "mixed_bfloat16"
    L = [
        input3("image", [B, 224, 224, 3]),
        layer3("Rescaling", "rescale", {"scale": 1 / 255, "offset": 0.0},
               call(kt("image", [B, 224, 224, 3])), [B, 224, 224, 3], P),
        layer3("Conv2D", "stem", {"filters": 128, "kernel_size": [3, 3], "strides": [2, 2],
                                   "padding": "same", "data_format": "channels_last",
                                   "dilation_rate": [1, 1], "groups": 1, "activation": "relu",
                                   "use_bias": True},
               call(kt("rescale", [B, 224, 224, 3])), [B, 224, 224, 3], P),
        layer3("BatchNormalization", "stem_bn", {"axis": -1, "momentum": 0.99, "epsilon": 0.001,
                                                  "center": True, "scale": True},
               call(kt("stem", [B, 112, 112, 128])), [B, 112, 112, 128], P),
        layer3("DepthwiseConv2D", "dw", {"kernel_size": [3, 3], "strides": [1, 1], "padding": "same",
                                         "depth_multiplier": 1, "data_format": "channels_last",
                                         "dilation_rate": [1, 1], "use_bias": False},
               call(kt("stem_bn", [B, 112, 112, 128])), [B, 112, 112, 128], P),
        layer3("SeparableConv2D", "sep", {"filters": 128, "kernel_size": [3, 3], "strides": [1, 1],
                                          "padding": "same", "depth_multiplier": 1,
                                          "data_format": "channels_last", "dilation_rate": [1, 1],
                                          "use_bias": True},
               call(kt("dw", [B, 112, 112, 128])), [B, 112, 112, 128], P),
        layer3("Add", "residual", {}, call([kt("stem_bn", [B, 112, 112, 128]),
                                            kt("sep", [B, 112, 112, 128])]),
               [[B, 112, 112, 128], [B, 112, 112, 128]], P),
        layer3("MaxPooling2D", "pool", {"pool_size": [2, 2], "padding": "valid", "strides": [2, 2],
                                        "data_format": "channels_last"},
               call(kt("residual", [B, 112, 112, 128])), [B, 112, 112, 128], P),
        layer3("GlobalAveragePooling2D", "gap", {"data_format": "channels_last", "keepdims": False},
               call(kt("pool", [B, 56, 56, 128])), [B, 56, 56, 128], P),
        layer3("Dropout", "drop", {"rate": 0.2, "seed": None}, call(kt("gap", [B, 128])), [B, 128], P),
        layer3("Dense", "logits", {"units": 1024, "activation": "softmax", "use_bias": True},
               call(kt("drop", [B, 128])), [B, 128], P),
    ]
    return functional3("cnn", L, [["image", 0, 0]], [["logits", 0, 0]], P)


def seed_float64_custom():
    """The seeds' example: a float64 Dense and a custom layer, in a Keras 3 Sequential."""
    B = None
    return {"module": "keras", "class_name": "Sequential",
            "config": {"name": "sequential", "trainable": True, "dtype": policy("float32"),
                       "layers": [
                           {"module": "keras.layers", "class_name": "InputLayer",
                            "config": {"batch_shape": [B, 64], "dtype": "float32",
                                       "sparse": False, "name": "features"},
                            "registered_name": None},
                           layer3("Dense", "dense_f64", {"units": 256, "activation": "relu",
                                                         "use_bias": True}, None, [B, 64],
                                  "float64"),
                           layer3("CustomLayer", "custom_layer", {"scale": 2.0}, None, [B, 256],
                                  module="my_project.layers", registered="my_project>CustomLayer"),
                           layer3("Dense", "head", {"units": 10, "activation": None,
                                                    "use_bias": True}, None, [B, 256]),
                       ]},
            "registered_name": None, "build_config": {"input_shape": [B, 64]}}


def text_model_keras2():
    """tf-keras 2 to_json: a string input through TextVectorization, an Embedding, a
    bidirectional LSTM, MultiHeadAttention (query/value kwargs) and a Lambda."""
    def l2(cls, name, config, inbound):
        cfg = {"name": name, "trainable": True, "dtype": "float32"}
        cfg.update(config)
        return {"class_name": cls, "config": cfg, "name": name, "inbound_nodes": inbound}
    layers = [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 1], "dtype": "string",
                                                "sparse": False, "ragged": False, "name": "text"},
         "name": "text", "inbound_nodes": []},
        l2("TextVectorization", "vectorize", {"max_tokens": 20000, "standardize": "lower_and_strip_punctuation",
                                               "split": "whitespace", "output_mode": "int",
                                               "output_sequence_length": 128},
           [[["text", 0, 0, {}]]]),
        l2("Embedding", "embed", {"input_dim": 20000, "output_dim": 128, "mask_zero": False},
           [[["vectorize", 0, 0, {}]]]),
        l2("Bidirectional", "bilstm", {"layer": {"class_name": "LSTM", "config": {
            "name": "lstm", "units": 64, "return_sequences": True, "dtype": "float32"}},
            "merge_mode": "concat"}, [[["embed", 0, 0, {}]]]),
        l2("MultiHeadAttention", "mha", {"num_heads": 4, "key_dim": 32, "value_dim": 32,
                                         "dropout": 0.0, "use_bias": True},
           [[["bilstm", 0, 0, {"value": ["bilstm", 0, 0]}]]]),
        l2("Lambda", "pick_first", {"function": ["4wEAAAAAAAAA", None, None], "function_type": "lambda",
                                    "module": "__main__", "output_shape": None, "arguments": {}},
           [[["mha", 0, 0, {}]]]),
        l2("Dense", "out", {"units": 1, "activation": "sigmoid", "use_bias": True},
           [[["pick_first", 0, 0, {}]]]),
    ]
    return {"class_name": "Functional",
            "config": {"name": "text_model", "layers": layers, "input_layers": [["text", 0, 0]],
                       "output_layers": [["out", 0, 0]]},
            "keras_version": "2.15.0", "backend": "tensorflow"}


def mlp_mixed_float16_keras2():
    """tf-keras 2 Sequential under mixed_float16 (the Policy object form) with a nested
    Sequential block called twice (shared weights)."""
    pol = {"class_name": "Policy", "config": {"name": "mixed_float16"}}
    block = {"class_name": "Sequential", "config": {"name": "block", "layers": [
        {"class_name": "Dense", "config": {"name": "block_dense", "units": 512, "dtype": pol,
                                           "activation": "gelu", "use_bias": True}},
        {"class_name": "LayerNormalization", "config": {"name": "block_ln", "axis": [-1],
                                                         "dtype": pol}}]}}
    return {"class_name": "Sequential", "config": {"name": "mlp", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 512], "dtype": "float32",
                                                "name": "x"}},
        block,
        {"class_name": "Dense", "config": {"name": "head", "units": 1000, "dtype": pol,
                                           "activation": "softmax"}}]},
            "keras_version": "2.13.1", "backend": "tensorflow"}


def write_keras(path: Path, config, version="3.6.0"):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("metadata.json", json.dumps({"keras_version": version, "date_saved": "2026-01-01@00:00:00"}))
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", b"")  # never read


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_keras(OUT / "cnn_mixed_bf16.keras", cnn_mixed_bf16())
    (OUT / "cnn_mixed_bf16_config.json").write_text(json.dumps(cnn_mixed_bf16(), indent=1))
    write_keras(OUT / "seed_float64_custom.keras", seed_float64_custom())
    (OUT / "text_model_keras2.json").write_text(json.dumps(text_model_keras2(), indent=1))
    (OUT / "mlp_mixed_float16_keras2.json").write_text(json.dumps(mlp_mixed_float16_keras2(), indent=1))
    # Hostile or broken.
    with zipfile.ZipFile(OUT / "bad_dotdot.keras", "w") as z:
        z.writestr("metadata.json", "{}")
        z.writestr("config.json", json.dumps(cnn_mixed_bf16()))
        z.writestr("assets/../../../tmp/evil", "x")
    with zipfile.ZipFile(OUT / "bad_bomb.keras", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("metadata.json", "{}")
        z.writestr("config.json", b" " * (64 << 20))
    broken = cnn_mixed_bf16()
    broken["config"]["layers"][3]["inbound_nodes"] = call(kt("ghost", [None, 8]))
    write_keras(OUT / "bad_dangling.keras", broken)
    (OUT / "bad_deep.json").write_text('{"class_name": "Sequential", "config": ' + "[" * 5000 + "]" * 5000 + "}")
    (OUT / "bad_truncated.json").write_text(json.dumps(text_model_keras2())[:700])
    huge = seed_float64_custom()
    huge["config"]["layers"][0]["config"]["batch_shape"] = [None, 2 ** 62]
    huge["config"]["layers"][1]["config"]["units"] = 2 ** 62
    (OUT / "bad_huge_dims.json").write_text(json.dumps(huge))


if __name__ == "__main__":
    main()


def write_h5_fixtures() -> None:
    """Legacy HDF5 models (h5py, as `model.save("m.h5")` writes them); needs python3-h5py."""
    import h5py
    import numpy as np
    with h5py.File(OUT / "mlp_mixed_float16_keras2.h5", "w") as f:
        f.attrs["model_config"] = json.dumps(mlp_mixed_float16_keras2()).encode("utf8")
        f.attrs["keras_version"] = b"2.13.1"
        f.attrs["backend"] = b"tensorflow"
        weights = f.create_group("model_weights")
        weights.create_dataset("head/kernel", data=np.zeros((4, 4), dtype=np.float32))  # stand-in
    with h5py.File(OUT / "seed_float64_custom_varlen.h5", "w") as f:
        f.attrs["model_config"] = json.dumps(seed_float64_custom())  # a variable-length str
    with h5py.File(OUT / "bad_weights_only.h5", "w") as f:
        f.create_dataset("dense/kernel", data=np.zeros((4, 4), dtype=np.float32))
    data = (OUT / "mlp_mixed_float16_keras2.h5").read_bytes()
    (OUT / "bad_truncated.h5").write_bytes(data[:1500])


if __name__ == "__main__" and "--h5" in __import__("sys").argv:
    write_h5_fixtures()
