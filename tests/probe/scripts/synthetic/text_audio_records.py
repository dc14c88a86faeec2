"""A multi-input classifier written for another machine: reviews, clips, TFRecords and JPEG files from
folders under data/, flowers from tensorflow_datasets and a text embedding from TF Hub (neither installed).
The bug: the gradients are computed but no optimizer step is ever taken."""
import os

import tensorflow as tf
import tensorflow_datasets as tfds
import tensorflow_hub as hub
from tensorflow import keras

BATCH = 16

reviews = keras.utils.text_dataset_from_directory("data/reviews/train", batch_size=None)
clips = keras.utils.audio_dataset_from_directory("data/speech/train", batch_size=None,
                                                 output_sequence_length=4000)
flowers, info = tfds.load("tf_flowers", split="train", as_supervised=True, with_info=True)
num_classes = info.features["label"].num_classes

feature_spec = {"features": tf.io.FixedLenFeature([4], tf.float32),
                "label": tf.io.FixedLenFeature([], tf.int64)}


def parse(record):
    example = tf.io.parse_single_example(record, feature_spec)
    return example["features"], example["label"]


records = tf.data.TFRecordDataset(tf.data.Dataset.list_files("data/records/*.tfrecord", shuffle=False))
records = records.map(parse)


def load_image(path):
    image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
    image = tf.image.resize(image, (32, 32)) / 255.0
    label = tf.strings.split(path, os.sep)[-2]
    return image, label


photos = tf.data.Dataset.list_files("data/photos/*/*.jpg", shuffle=False).map(load_image)

data = tf.data.Dataset.zip((reviews, clips, records, photos, flowers)).batch(BATCH)

text_in = keras.Input((), dtype="string")
audio_in = keras.Input((4000, 1))
record_in = keras.Input((4,))
photo_in = keras.Input((32, 32, 3))
flower_in = keras.Input((64, 64, 3))
text = hub.KerasLayer("https://tfhub.dev/google/nnlm-en-dim50/2", output_shape=[50], trainable=False)(text_in)
audio = keras.layers.GlobalAveragePooling1D()(keras.layers.Conv1D(8, 16, strides=8, activation="relu")(audio_in))
photo = keras.layers.GlobalAveragePooling2D()(keras.layers.Conv2D(8, 3, activation="relu")(photo_in))
flower = keras.layers.GlobalAveragePooling2D()(keras.layers.Rescaling(1 / 255)(flower_in))
merged = keras.layers.Concatenate()([text, audio, record_in, photo, flower])
hidden = keras.layers.Dense(32, activation="relu")(merged)
output = keras.layers.Dense(num_classes)(hidden)
model = keras.Model([text_in, audio_in, record_in, photo_in, flower_in], output)

loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(1e-3)

for epoch in range(3):
    for (text, _), (audio, _), (features, _), (photo, _), (flower, label) in data:
        with tf.GradientTape() as tape:
            logits = model([text, audio, features, photo, flower], training=True)
            loss = loss_fn(label, logits)
        grads = tape.gradient(loss, model.trainable_variables)
