"""Strips an ONNX file's weights the way testdata/models expects: every initializer keeps its name,
dtype and shape and points at an external-data file that does not exist (the fixture generators
share it)."""
import onnx


def strip_weights(path):
    model = onnx.load(path)
    for t in model.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            continue
        raw_size = len(t.raw_data) if t.HasField("raw_data") else 0
        t.ClearField("raw_data")
        for field in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            t.ClearField(field)
        t.data_location = onnx.TensorProto.EXTERNAL
        t.external_data.add(key="location", value="weights.bin")
        t.external_data.add(key="length", value=str(raw_size))
    onnx.save(model, path)
