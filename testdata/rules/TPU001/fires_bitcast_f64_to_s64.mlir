// The next float64 up, by stepping its bit pattern (what `jnp.nextafter` lowers to), traced with
// JAX's x64 mode: bitcast-convert between float64 and int64 has no float32-pair form in XLA:TPU's
// 64-bit rewrite (jax-ml/jax#21108), so the program does not compile for TPU.
module @jit_next_up attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf64>) -> (tensor<4xf64> {jax.result_info = ""}) {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<4xf64>) -> tensor<4xi64>
    %c = stablehlo.constant dense<1> : tensor<i64>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4xi64>
    %2 = stablehlo.add %0, %1 : tensor<4xi64>
    %3 = stablehlo.bitcast_convert %2 : (tensor<4xi64>) -> tensor<4xf64>
    return %3 : tensor<4xf64>
  }
}
