"""TL809 unnormalized-input: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class UnnormalizedInput(Rule):
    """
    ## What it does
    Reports a model fed raw non-negative values (0..255 images, counts) without a Rescaling or Normalization layer.

    ## Why is this bad?
    Inputs in the hundreds make the first layer's pre-activations huge: ReLU units die, softmax saturates, and the
    learning rate that suits scaled data is far too high. Seed 1 feeds 0..255 images to VGG16 without
    `preprocess_input`.

    ## Example
    ```python
    images = tf.cast(images, tf.float32)        # 0..255
    predictions = model(images, training=True)
    ```

    ## Use instead
    ```python
    images = tf.cast(images, tf.float32) / 255.0
    predictions = model(images, training=True)
    ```

    ## Known problems
    Centred inputs are not reported even when large (caffe-style `preprocess_input` gives -124..152, which VGG16
    expects). Integer inputs and models with Embedding or preprocessing layers are skipped.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL809` does. Reported at the model call inside the tape, with the batch's range.

    ## Options
    `input-max` (default 10) in `[tool.tapelint.probe]`.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://keras.io/api/layers/preprocessing_layers/image_preprocessing/rescaling/
    - https://keras.io/api/applications/vgg/ (preprocess_input)
    - https://github.com/BerkeleyHCI/umlaut (inputs outside [-1, 1])
    """

    code = "TL809"
    name = "unnormalized-input"
    message = "{details}"
    severity = Severity.WARNING
    runtime_only = True
