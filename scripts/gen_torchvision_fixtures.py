#!/usr/bin/env python3
"""Exports torchvision's Swin-T and RetinaNet (random weights) to ONNX with Debian's torch 1.13 and
strips the weights the way testdata/models expects: every initializer keeps its name, dtype and
shape and points at an external-data file that does not exist.

    /usr/bin/python3 scripts/gen_torchvision_fixtures.py testdata/models

Needs python3-torch, python3-torchvision and python3-onnx (Debian 12). Swin-T is the check that
torch's F.pad export (a reversed, transposed slice of the pads) folds to static shapes; RetinaNet
takes one CHW image (the model adds the batch dim) and resizes it to a size computed in float
arithmetic, which the estimate cannot follow and must say so.
"""
import os
import sys

import torch
import torchvision

from strip_onnx_weights import strip_weights


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "testdata/models"
    torch.manual_seed(0)
    swin = torchvision.models.swin_t(weights=None).eval()
    path = os.path.join(out, "swin_t.onnx")
    torch.onnx.export(swin, torch.randn(1, 3, 224, 224), path, opset_version=14,
                      input_names=["images"], dynamic_axes={"images": {0: "batch"}})
    strip_weights(path)
    retina = torchvision.models.detection.retinanet_resnet50_fpn(
        weights=None, weights_backbone=None).eval()
    path = os.path.join(out, "retinanet_resnet50_fpn.onnx")
    torch.onnx.export(retina, ([torch.randn(3, 512, 512)],), path, opset_version=14,
                      input_names=["images"])
    strip_weights(path)


if __name__ == "__main__":
    main()
