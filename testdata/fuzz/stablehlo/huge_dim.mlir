func.func @main(%arg0: tensor<9223372036854775807xf32>) -> tensor<9223372036854775807xf32> {
  %0 = stablehlo.negate %arg0 : tensor<9223372036854775807xf32>
  return %0 : tensor<9223372036854775807xf32>
}
