#!/usr/bin/env python3
"""Writes the tf.data fixtures of the PIPE rules (testdata/rules/PIPE*/) and testdata/tfdata/.

Each is a text GraphDef in the form `tf.data.Dataset._as_serialized_graph()` writes: Const inputs,
dataset ops with `output_types`/`output_shapes`, and the `map`/`interleave` functions in the
library. TensorFlow is not installed here; the op and input layouts follow
tensorflow/core/ops/dataset_ops.cc.

Usage: python3 scripts/gen_pipe_fixtures.py
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "testdata"


def const(name, dtype, value):
    field = {"DT_INT64": "int64_val", "DT_BOOL": "bool_val", "DT_STRING": "string_val",
             "DT_INT32": "int_val"}[dtype]
    if dtype == "DT_BOOL":
        v = "true" if value else "false"
    elif dtype == "DT_STRING":
        v = '"%s"' % value
    else:
        v = str(value)
    return ('node {\n  name: "%s"\n  op: "Const"\n  attr { key: "dtype" value { type: %s } }\n'
            '  attr { key: "value" value { tensor { dtype: %s tensor_shape { } %s: %s } } }\n}\n'
            % (name, dtype, dtype, field, v))


def dataset(name, op, inputs, extra=""):
    ins = "".join('  input: "%s"\n' % i for i in inputs)
    return ('node {\n  name: "%s"\n  op: "%s"\n%s'
            '  attr { key: "output_shapes" value { list { shape { dim { size: -1 } } } } }\n'
            '  attr { key: "output_types" value { list { type: DT_FLOAT } } }\n%s}\n'
            % (name, op, ins, extra))


def func_attr(fname):
    return ('  attr { key: "f" value { func { name: "%s" } } }\n'
            '  attr { key: "Targuments" value { list { } } }\n' % fname)


def map_function(fname, python=False):
    body = ('    node_def { name: "mul/y" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }'
            ' attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }\n'
            '    node_def { name: "mul" op: "Mul" input: "args_0" input: "mul/y:output:0"'
            ' attr { key: "T" value { type: DT_FLOAT } } }\n')
    last = "mul:z:0"
    if python:
        body += ('    node_def { name: "EagerPyFunc" op: "EagerPyFunc" input: "mul:z:0"'
                 ' attr { key: "Tin" value { list { type: DT_FLOAT } } }'
                 ' attr { key: "Tout" value { list { type: DT_FLOAT } } }'
                 ' attr { key: "token" value { s: "pyfunc_0" } } }\n')
        last = "EagerPyFunc:output:0"
    return ('  function {\n    signature { name: "%s" input_arg { name: "args_0" type: DT_FLOAT }'
            ' output_arg { name: "identity" type: DT_FLOAT } }\n%s'
            '    node_def { name: "Identity" op: "Identity" input: "%s"'
            ' attr { key: "T" value { type: DT_FLOAT } } }\n'
            '    ret { key: "identity" value: "Identity:output:0" }\n  }\n' % (fname, body, last))


def pipeline(*, python=False, parallel_map=True, prefetch=True, drop_remainder=True, batch_v1=False,
             interleave=None, shuffle=None, path="gs://bucket/train-00000-of-01024.tfrecord"):
    """files → [interleave] → [shuffle] → map → batch → [prefetch]"""
    g = const("filenames", "DT_STRING", path)
    g += const("compression_type", "DT_STRING", "")
    g += const("buffer_size", "DT_INT64", 262144)
    g += dataset("TFRecordDataset", "TFRecordDataset", ["filenames", "compression_type", "buffer_size"])
    src = "TFRecordDataset"
    lib = map_function("__inference_Dataset_map_parse_12", python)
    if interleave is not None:
        g += const("cycle_length", "DT_INT64", 16) + const("block_length", "DT_INT64", 1)
        lib += map_function("__inference_Dataset_interleave_read_20")
        if interleave == "parallel":
            g += const("interleave_parallel", "DT_INT64", -1)
            g += dataset("ParallelInterleaveDatasetV4", "ParallelInterleaveDatasetV4",
                         [src, "cycle_length", "block_length", "cycle_length", "interleave_parallel"],
                         func_attr("__inference_Dataset_interleave_read_20"))
            src = "ParallelInterleaveDatasetV4"
        else:
            g += dataset("InterleaveDataset", "InterleaveDataset", [src, "cycle_length", "block_length"],
                         func_attr("__inference_Dataset_interleave_read_20"))
            src = "InterleaveDataset"
    if shuffle is not None:
        g += const("shuffle_buffer", "DT_INT64", shuffle) + const("seed", "DT_INT64", 0)
        g += const("seed2", "DT_INT64", 0)
        g += dataset("ShuffleDataset", "ShuffleDataset", [src, "shuffle_buffer", "seed", "seed2"])
        src = "ShuffleDataset"
    if parallel_map:
        g += const("num_parallel_calls", "DT_INT64", -1)
        g += dataset("ParallelMapDatasetV2", "ParallelMapDatasetV2", [src, "num_parallel_calls"],
                     func_attr("__inference_Dataset_map_parse_12"))
        src = "ParallelMapDatasetV2"
    else:
        g += dataset("MapDataset", "MapDataset", [src], func_attr("__inference_Dataset_map_parse_12"))
        src = "MapDataset"
    g += const("batch_size", "DT_INT64", 128)
    if batch_v1:
        g += dataset("BatchDataset", "BatchDataset", [src, "batch_size"])
        src = "BatchDataset"
    else:
        g += const("drop_remainder", "DT_BOOL", drop_remainder)
        g += dataset("BatchDatasetV2", "BatchDatasetV2", [src, "batch_size", "drop_remainder"])
        src = "BatchDatasetV2"
    if prefetch:
        g += const("prefetch_buffer", "DT_INT64", -1)
        g += dataset("PrefetchDataset", "PrefetchDataset", [src, "prefetch_buffer"])
    return g + "library {\n" + lib + "}\nversions { producer: 1645 min_consumer: 12 }\n"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main() -> None:
    good = dict(interleave="parallel", shuffle=10000)
    r = ROOT / "rules"
    write(r / "PIPE001/fires_py_function_in_map.pbtxt", pipeline(python=True, **good))
    write(r / "PIPE001/silent_tf_ops_in_map.pbtxt", pipeline(**good))
    write(r / "PIPE002/fires_map_without_parallel_calls.pbtxt", pipeline(parallel_map=False, **good))
    write(r / "PIPE002/silent_parallel_map.pbtxt", pipeline(**good))
    write(r / "PIPE003/fires_no_prefetch.pbtxt", pipeline(prefetch=False, **good))
    write(r / "PIPE003/silent_prefetch.pbtxt", pipeline(**good))
    write(r / "PIPE004/fires_drop_remainder_false.pbtxt", pipeline(drop_remainder=False, **good))
    write(r / "PIPE004/fires_batch_v1.pbtxt", pipeline(batch_v1=True, **good))
    write(r / "PIPE004/silent_drop_remainder_true.pbtxt", pipeline(**good))
    write(r / "PIPE005/fires_sequential_interleave.pbtxt", pipeline(interleave="sequential", shuffle=10000))
    write(r / "PIPE005/silent_parallel_interleave.pbtxt", pipeline(**good))
    write(r / "PIPE006/fires_shuffle_100.pbtxt", pipeline(interleave="parallel", shuffle=100))
    write(r / "PIPE006/silent_shuffle_10000.pbtxt", pipeline(**good))
    write(r / "PIPE007/fires_local_files.pbtxt", pipeline(path="/home/me/data/train.tfrecord", **good))
    write(r / "PIPE007/fires_s3.pbtxt", pipeline(path="s3://my-bucket/train.tfrecord", **good))
    write(r / "PIPE007/silent_gcs.pbtxt", pipeline(**good))
    # The issue's example: py_function in map and a batch without drop_remainder, and more.
    write(ROOT / "tfdata/seed_pipeline.pbtxt",
          pipeline(python=True, parallel_map=False, prefetch=False, drop_remainder=False,
                   interleave="sequential", shuffle=64))
    write(ROOT / "tfdata/good_pipeline.pbtxt", pipeline(**good))


if __name__ == "__main__":
    main()
