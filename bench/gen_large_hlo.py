#!/usr/bin/env python3
"""Write an HLO text module of LAYERS layers (dot + add + tanh + reduce, with metadata, as a JAX
dump has them): `bench/gen_large_hlo.py 6000 big.hlo` writes about 4 MB. The same network as
`GenerateHlo` in bench/check_bench.cc, as a file for timing the whole `check` command."""

import sys


def main():
    layers, out = int(sys.argv[1]), sys.argv[2]
    lines = [
        "HloModule big, entry_computation_layout={(f32[128,512]{1,0})->f32[128,512]{1,0}}",
        "",
        "%add_f32 (a: f32[], b: f32[]) -> f32[] {",
        "  %a = f32[] parameter(0)",
        "  %b = f32[] parameter(1)",
        "  ROOT %s = f32[] add(f32[] %a, f32[] %b)",
        "}",
        "",
        "ENTRY %main (x: f32[128,512]) -> f32[128,512] {",
        "  %x = f32[128,512]{1,0} parameter(0)",
        "  %zero = f32[] constant(0)",
    ]
    prev = "x"
    for i in range(layers):
        meta = f'op_name="jit(f)/layer_{i}/dot_general" source_file="model.py" source_line={10 + i % 90}'
        lines += [
            f"  %w.{i} = f32[512,512]{{1,0}} constant({{...}})",
            f"  %dot.{i} = f32[128,512]{{1,0}} dot(f32[128,512]{{1,0}} %{prev}, f32[512,512]{{1,0}} "
            f"%w.{i}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{{meta}}}",
            f"  %b.{i} = f32[128,512]{{1,0}} broadcast(f32[] %zero), dimensions={{}}",
            f"  %add.{i} = f32[128,512]{{1,0}} add(f32[128,512]{{1,0}} %dot.{i}, f32[128,512]{{1,0}} "
            f'%b.{i}), metadata={{op_name="jit(f)/layer_{i}/add"}}',
            f"  %act.{i} = f32[128,512]{{1,0}} tanh(f32[128,512]{{1,0}} %add.{i})",
            f"  %sum.{i} = f32[128]{{0}} reduce(f32[128,512]{{1,0}} %act.{i}, f32[] %zero), "
            "dimensions={1}, to_apply=%add_f32",
        ]
        prev = f"act.{i}"
    lines += [f"  ROOT %out = f32[128,512]{{1,0}} copy(f32[128,512]{{1,0}} %{prev})", "}", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
