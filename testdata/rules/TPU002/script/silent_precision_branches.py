# A multi-platform script that picks its precision by name: float16 in the GPU branch, bfloat16
# in the TPU branch of the same if-chain, and a custom getter that gives float16 only when asked
# for it. The TPU path is already bfloat16: nothing to report.
import tensorflow as tf


def float16_getter(getter, *args, **kwargs):
    cast_to_float16 = False
    if kwargs["dtype"] == tf.float16:
        kwargs["dtype"] = tf.float32
        cast_to_float16 = True
    var = getter(*args, **kwargs)
    if cast_to_float16:
        var = tf.cast(var, tf.float16)
    return var


def build(precision, images, model_fn):
    if precision == "mixed_bfloat16":
        tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
        inputs = tf.cast(images, tf.bfloat16)
    elif precision == "mixed_float16":
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        inputs = tf.cast(images, tf.float16)
    else:
        inputs = images
    return model_fn(inputs)
