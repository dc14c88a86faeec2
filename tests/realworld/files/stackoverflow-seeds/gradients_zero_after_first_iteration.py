# The code of the Stack Overflow question "Gradients are zero except first iteration in tensorflow"
# (tapelint's seed report 1, shared/seeds/000_*.txt), as the question shows it, its prose left out. The
# question shows no imports: the four lines below are added so names resolve; nothing else is changed.
import os
import cv2
import numpy as np
import tensorflow as tf
import tqdm as tq
from tensorflow import keras

inp = keras.layers.Input(shape=(224, 224, 3))

vgg = tf.keras.applications.VGG16(include_top=False, weights='imagenet',
                                                     input_tensor=inp, input_shape=(224, 224, 3))
vgg.trainable = False

x1 = vgg.get_layer('block5_pool').output
x2 = tf.keras.layers.GlobalAveragePooling2D()(x1)
x3 = keras.layers.Dense(64, activation='relu')(x2)
output = keras.layers.Dense(2, activation='softmax')(x3)

model = tf.keras.models.Model(inputs=inp, outputs=output)


def calculate_total_loss(model, original_img, preprocessed_image, target, alpha):
    predictions=model(preprocessed_image, training=True)
    L_cl = loss_object(y_true=target, y_pred=predictions)

    return loss_object(y_true=target, y_pred=predictions)

def calculate_gradient(model, original_img, preprocessed_image, target):

    with tf.GradientTape() as tape:
      loss_value = calculate_total_loss(model, original_img, preprocessed_image, target, alpha=1)

      
    return loss_value,tape.gradient(loss_value, model.trainable_variables)


optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
train_loss_results = []
train_accuracy_results = []
num_epochs = 4

for epoch in range(num_epochs):

    loss=[]
    for i in tq.tqdm(range(50)):
 
        x=train_x[i]
        y=train_y[i][0:2]
        index_of_path_of_image=train_y[i][2].astype('int32') 

        original_image=cv2.imread("/content/files/train/"+os.listdir("/content/files/train")[index_of_path_of_image])
        
        original_image=cv2.resize(original_image,(224,224))
        x=np.expand_dims(x,0)
        y=np.expand_dims(y,0)

        loss_value, grads = calculate_gradient(model, original_image, x, y)
        loss.append(loss_value)

    print(np.mean(loss))
