// JAX's rng_bit_generator packs pairs of uint32 into uint64 and back: a bitcast-convert between
// 64-bit and 32-bit integers, which XLA:TPU's 64-bit rewrite handles (it failed until a 2021
// libtpu, google-research/t5x#79). Only float64 <-> int64 reinterpretations are a gap.
module @jit_rng attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x2xui32>) -> (tensor<2x2xui32> {jax.result_info = ""}) {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<2x2xui32>) -> tensor<2xui64>
    %1 = stablehlo.bitcast_convert %0 : (tensor<2xui64>) -> tensor<2x2xui32>
    return %1 : tensor<2x2xui32>
  }
}
