module @iree_example {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<i1>) -> tensor<4xf32> {
    %pred = tensor.extract %arg1[] : tensor<i1>
    cf.cond_br %pred, ^bb1, ^bb2
  ^bb1:
    %0 = stablehlo.abs %arg0 : tensor<4xf32>
    cf.br ^bb3(%0 : tensor<4xf32>)
  ^bb2:
    %1 = stablehlo.negate %arg0 : tensor<4xf32>
    cf.br ^bb3(%1 : tensor<4xf32>)
  ^bb3(%r: tensor<4xf32>):
    return %r : tensor<4xf32>
  }
}
