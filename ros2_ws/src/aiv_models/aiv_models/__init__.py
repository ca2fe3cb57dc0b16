"""Model plumbing shared by the AIV backends, free of ROS: local weights, devices, chat transports.

Importing this package does not import torch or transformers; the modules that need them import them inside
the functions that load a model, so the weight-free default never pays for them.
"""
