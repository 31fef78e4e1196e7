"""The training lab: a tiny Transformer trained live in NumPy with a hand-written backward pass.

tasks.py (the tasks, from a seed), model.py (forward and backward over a batch, reusing the
attention layer's steps), optim.py (Adam), train.py (settings, the loop, the frozen run),
experiments.py (the five experiments). Imports only NumPy and the standard library.
"""
