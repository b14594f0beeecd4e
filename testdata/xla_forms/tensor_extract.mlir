func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<i1>) -> tensor<4xf32> {
  %0 = tensor.extract %arg1[] : tensor<i1>
  %1 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
