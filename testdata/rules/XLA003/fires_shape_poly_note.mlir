module @jit_scale attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x128xf32>) -> (tensor<?x128xf32> {jax.result_info = ""}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<?x128xf32>
    return %0 : tensor<?x128xf32>
  }
}
