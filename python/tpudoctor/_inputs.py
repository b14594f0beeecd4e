"""Turns what a user hands to tpudoctor.check/estimate into bytes the native core reads.

A path (str or os.PathLike) is read by the core itself (SavedModel folders included), except a
legacy Keras `.h5` file: its model config is read here with h5py, because the core would read it
with libhdf5 in a forked child, which a Python process must not do. Live objects are serialised
the way their framework does it, in process, without touching the network:

- a `torch.nn.Module` with example inputs: `torch.export` (saved as a .pt2) when the installed
  torch has it, `torch.onnx.export` otherwise (Debian 12 ships torch 1.13);
- a jitted JAX function with example inputs, or a `Lowered` object: its StableHLO text;
- a Keras model: `model.to_json()`;
- a `tf.data.Dataset`: the GraphDef of its pipeline.
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from . import _core

Error = _core.Error

_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_TEXT_MODEL_STARTS = ("{", "HloModule", "module", "func.func", "#loc", "node {", "node{")


@dataclass
class ModelInput:
    """Either a path the core reads, or bytes with a display name and optional forced format."""

    path: Optional[str] = None
    data: Optional[bytes] = None
    name: str = "<bytes>"
    input_format: str = ""


def resolve(obj: Any, example_inputs: Sequence[Any], input_format: Optional[str]) -> ModelInput:
    fmt = input_format or ""
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return ModelInput(data=bytes(obj), name="<bytes>", input_format=fmt)
    if isinstance(obj, os.PathLike) or isinstance(obj, str):
        return _resolve_path_or_text(obj, fmt)
    for kind, convert in _CONVERTERS:
        if kind(obj):
            return convert(obj, tuple(example_inputs))
    raise Error(
        f"cannot analyse an object of type `{type(obj).__name__}`: pass a model path, bytes, "
        "model text, a torch.nn.Module, a jitted JAX function, a Keras model or a tf.data.Dataset"
    )


def _resolve_path_or_text(obj: Any, fmt: str) -> ModelInput:
    text = os.fspath(obj)
    if isinstance(obj, str) and not os.path.exists(text):
        if text.lstrip().startswith(_TEXT_MODEL_STARTS):
            return ModelInput(data=text.encode("utf-8"), name="<string>", input_format=fmt)
        raise Error(f"{text}: no such file or directory")
    if os.path.isfile(text) and not fmt in ("onnx", "pt2", "tf", "hlo", "stablehlo"):
        with open(text, "rb") as f:
            head = f.read(8)
        if head == _HDF5_MAGIC:
            return _read_h5(text)
    return ModelInput(path=text, name=text, input_format=fmt)


# libhdf5 trusts the sizes a file declares: a damaged 8 KiB .h5 can make it allocate gigabytes or
# spin. So h5py reads the config in a separate interpreter (started with fork+exec by subprocess,
# which is safe in a threaded process) under memory and CPU limits; it answers in JSON.
_H5_READER = r"""
import json, resource, sys
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
resource.setrlimit(resource.RLIMIT_CPU, (10, 11))
try:
    import h5py
except ImportError:
    print(json.dumps({"missing": True}))
    sys.exit(0)
try:
    with h5py.File(sys.argv[1], "r") as f:
        config = f.attrs.get("model_config")
except Exception as e:
    print(json.dumps({"error": type(e).__name__}))
    sys.exit(0)
if isinstance(config, bytes):
    config = config.decode("utf-8", "replace")
print(json.dumps({"config": None if config is None else str(config)}))
"""
_H5_READER_MEMORY = 1 << 30  # address space of the reader: Python and h5py take ~70 MiB of it


def _read_h5(path: str) -> ModelInput:
    import json
    import subprocess
    import sys

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _H5_READER, path, str(_H5_READER_MEMORY)],
            capture_output=True, timeout=30, env=env, check=False)
        answer = json.loads(done.stdout.decode("utf-8", "replace") or "null")
    except (subprocess.TimeoutExpired, ValueError, OSError):
        answer = None
    if not isinstance(answer, dict):
        raise Error(f"{path}: h5py could not read this HDF5 file (it crashed or ran out of "
                    "time or memory); the file is damaged or not a Keras model")
    if answer.get("missing"):
        # No h5py: the core refuses it with a message that names the alternatives.
        return ModelInput(path=path, name=path)
    if "error" in answer:
        raise Error(f"{path}: h5py could not read this HDF5 file ({answer['error']})")
    config = answer.get("config")
    if config is None:
        raise Error(f"{path}: an HDF5 file without a `model_config` attribute: not a Keras model")
    return ModelInput(data=str(config).encode("utf-8"), name=path, input_format="keras")


def _is_torch_module(obj: Any) -> bool:
    torch = _module_if_loaded("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def _from_torch(module: Any, example_inputs: tuple) -> ModelInput:
    import torch

    if not example_inputs:
        raise Error("a torch.nn.Module needs example inputs: tpudoctor.check(model, x)")
    name = type(module).__name__
    buf = io.BytesIO()
    with _quiet():
        try:
            export = getattr(torch, "export", None)
            if export is not None and hasattr(export, "export") and hasattr(export, "save"):
                export.save(export.export(module, example_inputs), buf)
                return ModelInput(data=buf.getvalue(), name=f"<{name}>.pt2", input_format="pt2")
            # verbose=True records each node's Python stack in its doc_string, so findings
            # point at the model's line (`.double()`), not only at the ONNX node.
            torch.onnx.export(module, example_inputs, buf, opset_version=13, verbose=True)
        except Exception as e:
            message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise Error(f"exporting `{name}` failed: {message}") from None
    return ModelInput(data=buf.getvalue(), name=f"<{name}>.onnx", input_format="onnx")


def _is_jax_function(obj: Any) -> bool:
    return callable(getattr(obj, "lower", None)) or _is_jax_lowered(obj)


def _is_jax_lowered(obj: Any) -> bool:
    return callable(getattr(obj, "as_text", None)) and callable(getattr(obj, "compile", None))


def _from_jax(fn: Any, example_inputs: tuple) -> ModelInput:
    lowered = fn if _is_jax_lowered(fn) else fn.lower(*example_inputs)
    name = getattr(fn, "__name__", "jitted")
    return ModelInput(
        data=lowered.as_text().encode("utf-8"),
        name=f"<{name}>.stablehlo.mlir",
        input_format="stablehlo",
    )


def _is_keras_model(obj: Any) -> bool:
    return callable(getattr(obj, "to_json", None)) and hasattr(obj, "layers")


def _from_keras(model: Any, _: tuple) -> ModelInput:
    name = getattr(model, "name", "model")
    return ModelInput(
        data=model.to_json().encode("utf-8"), name=f"<{name}>.json", input_format="keras"
    )


def _is_tf_dataset(obj: Any) -> bool:
    return callable(getattr(obj, "_as_serialized_graph", None))


def _from_tf_dataset(dataset: Any, _: tuple) -> ModelInput:
    graph = dataset._as_serialized_graph()
    data = graph.numpy() if hasattr(graph, "numpy") else bytes(graph)
    return ModelInput(data=data, name="<tf.data.Dataset>.pb", input_format="tf")


_CONVERTERS = (
    (_is_torch_module, _from_torch),
    (_is_keras_model, _from_keras),
    (_is_tf_dataset, _from_tf_dataset),
    (_is_jax_function, _from_jax),
)


def _module_if_loaded(name: str):
    """The module if the user's program imported it: tpudoctor never imports a framework itself
    just to find out that an object is not one of its types."""
    import sys

    return sys.modules.get(name)


@contextlib.contextmanager
def _quiet():
    """Exporters print progress and warnings, from Python and from C++ (torch.onnx's verbose graph
    goes to file descriptor 1); the library never prints."""
    import os
    import sys
    import tempfile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for stream in (sys.__stdout__, sys.__stderr__):
                try:
                    stream.flush()
                except (AttributeError, ValueError, OSError):
                    pass
            saved = [os.dup(1), os.dup(2)]
            try:
                with tempfile.TemporaryFile() as sink:
                    os.dup2(sink.fileno(), 1)
                    os.dup2(sink.fileno(), 2)
                    yield
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                for fd in saved:
                    os.close(fd)
