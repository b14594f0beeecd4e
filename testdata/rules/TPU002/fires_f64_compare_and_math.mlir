module @jit_masked_max_plus attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x128xf32>, %arg1: tensor<8x128xf32>) -> (tensor<8xf32> {jax.result_info = ""}) {
    %0 = stablehlo.convert %arg0 : (tensor<8x128xf32>) -> tensor<8x128xf64>
    %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<8x128xf64>
    %2 = stablehlo.compare  GT, %0, %1,  FLOAT : (tensor<8x128xf64>, tensor<8x128xf64>) -> tensor<8x128xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %w = stablehlo.add %0, %1 : tensor<8x128xf64>
    %n = stablehlo.convert %w : (tensor<8x128xf64>) -> tensor<8x128xf32>
    %4 = stablehlo.select %2, %n, %3 : tensor<8x128xi1>, tensor<8x128xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_1) applies stablehlo.maximum across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    return %5 : tensor<8xf32>
  }
}
