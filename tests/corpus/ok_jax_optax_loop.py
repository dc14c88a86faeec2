# expect: none
"""A JAX/optax loop: softmax cross-entropy with optax, argument order (logits, labels) is optax's."""
import jax
import jax.numpy as jnp
import optax


def init_params(key, sizes):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (n_in, n_out)) * 0.01, jnp.zeros(n_out)))
    return params


def predict(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, labels):
    logits = predict(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


optimizer = optax.adam(1e-3)
params = init_params(jax.random.PRNGKey(0), [784, 128, 10])
opt_state = optimizer.init(params)


@jax.jit
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


key = jax.random.PRNGKey(1)
for step in range(100):
    key, k1, k2 = jax.random.split(key, 3)
    x = jax.random.normal(k1, (64, 784))
    y = jax.random.randint(k2, (64,), 0, 10)
    params, opt_state, loss = train_step(params, opt_state, x, y)
