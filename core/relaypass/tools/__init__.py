"""Applications built on the library: the CLI, bisection, reproducers, the model zoo.

Only this layer may pick a default pass or instrument by name (each command's
``--help`` says which); everything below reaches passes through the registry.
"""
