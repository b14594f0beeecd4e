#!/usr/bin/python3
"""The Python baseline a user would otherwise run: onnx.load + onnx.shape_inference.infer_shapes.

Usage: python_baseline.py MODEL.onnx   (prints nothing; the benchmark times the whole process)
"""
import sys

import onnx
from onnx import shape_inference

model = onnx.load(sys.argv[1], load_external_data=False)
shape_inference.infer_shapes(model, data_prop=True)
