#!/usr/bin/env python3
"""Writes Whisper-tiny (random weights, OpenAI's published architecture: whisper/model.py's
AudioEncoder and TextDecoder with the `tiny` dimensions) as ONNX with Debian's torch 1.13, weights
stripped the way testdata/models expects (every initializer keeps its name, dtype and shape and
points at an external-data file that does not exist).

    /usr/bin/python3 scripts/gen_whisper_fixture.py testdata/models

Inputs: a log-mel spectrogram [batch, 80, 3000] and decoder tokens [batch, 448]; the batch dim is
symbolic. The model mixes two 1-D convolutions (the audio stem) with attention: the fixture for
"only convolution activations are laid out channels-minor" (Whisper-tiny training at batch 8 was
once reported as needing 65 GiB on a 16 GiB v5e).
"""
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from strip_onnx_weights import strip_weights  # noqa: E402

N_MELS, AUDIO_CTX, TEXT_CTX, VOCAB = 80, 1500, 448, 51865
STATE, HEADS, LAYERS = 384, 6, 4  # whisper "tiny"


def sinusoids(length, channels):
    scale = math.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-scale * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(STATE, STATE)
        self.key = nn.Linear(STATE, STATE, bias=False)
        self.value = nn.Linear(STATE, STATE)
        self.out = nn.Linear(STATE, STATE)

    def forward(self, x, xa=None, causal=False):
        src = x if xa is None else xa
        q, k, v = self.query(x), self.key(src), self.value(src)
        b, t, _ = q.shape
        s = k.shape[1]
        scale = (STATE // HEADS) ** -0.25  # Whisper scales q and k each by d^-1/4
        q = q.view(b, t, HEADS, -1).permute(0, 2, 1, 3) * scale
        k = k.view(b, s, HEADS, -1).permute(0, 2, 3, 1) * scale
        v = v.view(b, s, HEADS, -1).permute(0, 2, 1, 3)
        qk = q @ k
        if causal:
            qk = qk + torch.full((t, s), float("-inf")).triu_(1)
        w = F.softmax(qk.float(), dim=-1).to(q.dtype)
        return self.out((w @ v).permute(0, 2, 1, 3).flatten(start_dim=2))


class Block(nn.Module):
    def __init__(self, cross):
        super().__init__()
        self.attn, self.attn_ln = Attention(), nn.LayerNorm(STATE)
        self.cross = Attention() if cross else None
        self.cross_ln = nn.LayerNorm(STATE) if cross else None
        self.mlp = nn.Sequential(nn.Linear(STATE, 4 * STATE), nn.GELU(), nn.Linear(4 * STATE, STATE))
        self.mlp_ln = nn.LayerNorm(STATE)

    def forward(self, x, xa=None, causal=False):
        x = x + self.attn(self.attn_ln(x), causal=causal)
        if self.cross is not None:
            x = x + self.cross(self.cross_ln(x), xa)
        return x + self.mlp(self.mlp_ln(x))


class WhisperTiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(N_MELS, STATE, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(STATE, STATE, kernel_size=3, stride=2, padding=1)
        self.register_buffer("audio_positions", sinusoids(AUDIO_CTX, STATE))
        self.encoder = nn.ModuleList([Block(cross=False) for _ in range(LAYERS)])
        self.ln_post = nn.LayerNorm(STATE)
        self.token_embedding = nn.Embedding(VOCAB, STATE)
        self.text_positions = nn.Parameter(torch.empty(TEXT_CTX, STATE).normal_(0, 0.01))
        self.decoder = nn.ModuleList([Block(cross=True) for _ in range(LAYERS)])
        self.ln = nn.LayerNorm(STATE)

    def forward(self, mel, tokens):
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).permute(0, 2, 1)
        x = x + self.audio_positions
        for block in self.encoder:
            x = block(x)
        audio = self.ln_post(x)
        y = self.token_embedding(tokens) + self.text_positions
        for block in self.decoder:
            y = block(y, audio, causal=True)
        return self.ln(y) @ self.token_embedding.weight.T


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "testdata/models"
    torch.manual_seed(0)
    model = WhisperTiny().eval()
    mel = torch.randn(1, N_MELS, 2 * AUDIO_CTX)
    tokens = torch.zeros(1, TEXT_CTX, dtype=torch.long)
    path = os.path.join(out, "whisper_tiny.onnx")
    torch.onnx.export(model, (mel, tokens), path, input_names=["mel", "tokens"], output_names=["logits"],
                      dynamic_axes={"mel": {0: "batch"}, "tokens": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=14, do_constant_folding=True)
    strip_weights(path)
    params = sum(p.numel() for p in model.parameters())
    print(f"{path}: {params / 1e6:.1f}M parameters, {os.path.getsize(path) / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
